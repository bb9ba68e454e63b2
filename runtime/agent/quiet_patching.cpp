// Modules are patched and unpatched only while no kernel runs (see Agent::quiet): the next
// launch after an attach or a detach, on the launching thread, with every other launching thread
// held in its callback, waits for the traced contexts to go idle and does it then.
#include <utility>
#include <vector>

#include "runtime/agent/agent_state.h"
#include "runtime/agent/driver_api.h"

namespace gpubt::agent {
namespace {

using Quiet = Agent::Quiet;

void set_quiet(Agent &a, Quiet q) {
  {
    std::lock_guard<std::mutex> lock(a.quiet_mu);
    a.quiet = q;
  }
  a.quiet_cv.notify_all();
}

// What was launched before this returns has finished (a.mu held: launching threads wait in their
// callbacks, so nothing new starts).
void synchronize_contexts(Agent &a) {
  for (const auto &[ctx, c] : a.contexts) {
    if (GPUBT_DRIVER(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
      continue;
    GPUBT_DRIVER(cuCtxSynchronize)();
    CUcontext popped = nullptr;
    GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
  }
}

// The callback data this session gave functions points at memory a detach frees; the next
// session patches the same functions again, and its probes would read it before their first
// launch callback sets theirs (an illegal address on the H100 and H200, issue 23). a.mu held: no
// module unloads meanwhile, so every handle is still valid.
void clear_callback_data(Agent &a) {
  for (auto &[ctx, c] : a.contexts) {
    for (const auto &[function, module] : c->callback_data)
      if (SanitizerResult r = sanitizerSetCallbackData(function, nullptr); r != SANITIZER_SUCCESS)
        say(a, "clearing a kernel's probe data failed (" + result_text(r) + ")");
    c->callback_data.clear();
  }
}

} // namespace

void patch_known_modules(Agent &a) {
  std::vector<std::pair<CUmodule, KnownModule>> modules;
  {
    std::lock_guard<std::mutex> lock(a.known_mu);
    modules.assign(a.known_modules.begin(), a.known_modules.end());
    a.deferred.clear();
  }
  // Modules loaded meanwhile wait in `deferred` (their callbacks must not wait for a.mu while
  // this thread, holding it, calls the Compute Sanitizer): patched here until none is left.
  for (;;) {
    for (const auto &[module, known] : modules)
      patch_module(a, known.context, module, known, false);
    modules.clear();
    std::lock_guard<std::mutex> lock(a.known_mu);
    if (a.deferred.empty()) {
      a.attaching = false;
      return;
    }
    for (CUmodule m : std::exchange(a.deferred, {}))
      if (auto it = a.known_modules.find(m); it != a.known_modules.end())
        modules.emplace_back(m, it->second);
  }
}

void unpatch_all_modules(Agent &a) {
  std::lock_guard<std::mutex> patching(a.patch_mu);
  for (auto &[ctx, c] : a.contexts) {
    for (CUmodule m : c->patched)
      if (SanitizerResult r = sanitizerUnpatchModule(m); r != SANITIZER_SUCCESS)
        say(a, "unpatching a module failed (" + result_text(r) + ")");
    c->patched.clear();
    c->detaching = true;
  }
  clear_callback_data(a);
}

bool patch_at_next_launch(Agent &a, bool patch, std::chrono::milliseconds timeout) {
  {
    // With several contexts a kernel on one GPU may wait for a launch on another (a collective
    // of one process's GPUs): holding launches while waiting for the GPUs could hang the job.
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    if (a.contexts.size() != 1)
      return false;
  }
  Quiet asked = patch ? Quiet::Patch : Quiet::Unpatch;
  std::unique_lock<std::mutex> lock(a.quiet_mu);
  a.quiet = asked;
  bool done = a.quiet_cv.wait_for(lock, timeout, [&] { return a.quiet == Quiet::Done; });
  if (!done && a.quiet.compare_exchange_strong(asked, Quiet::None))
    return false; // no launch came: the caller does it (nothing runs, or only graphs)
  a.quiet_cv.wait(lock, [&] { return a.quiet == Quiet::Done; }); // a launch is at it
  a.quiet = Quiet::None;
  return true;
}

void run_quiet_patching(Agent &a, CUstream stream) {
  Quiet asked = a.quiet.load();
  if (asked != Quiet::Patch && asked != Quiet::Unpatch)
    return;
  // A launch into a graph being captured: synchronizing now would break the capture.
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  if (GPUBT_DRIVER(cuStreamIsCapturing)(stream, &capturing) != CUDA_SUCCESS ||
      capturing != CU_STREAM_CAPTURE_STATUS_NONE)
    return; // a later launch does it
  if (!a.quiet.compare_exchange_strong(asked, Quiet::Busy))
    return;
  {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    // Relaxed: another thread's capture in global mode must not refuse (or be broken by) the sync.
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    GPUBT_DRIVER(cuThreadExchangeStreamCaptureMode)(&mode);
    synchronize_contexts(a);
    GPUBT_DRIVER(cuThreadExchangeStreamCaptureMode)(&mode);
    if (asked == Quiet::Patch)
      patch_known_modules(a);
    else
      unpatch_all_modules(a);
  }
  set_quiet(a, Quiet::Done);
}

} // namespace gpubt::agent
