// Modules are patched and unpatched only while no kernel runs (see Agent::quiet): the next
// launch after an attach or a detach, on the launching thread, with every other launching thread
// held in its callback, waits for the traced contexts to go idle and does it then. The wait has a
// limit: a kernel that runs on (persistent, or hung) must not hold the program's launches, and
// patching under it could kill it, so past the limit nothing is patched or unpatched.
#include <utility>
#include <vector>

#include "runtime/cuda_agent/agent_state.h"
#include "runtime/cuda_agent/driver_api.h"
#include "runtime/cuda_agent/idle_wait.h"

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

bool patch_when_idle(Agent &a, bool patch) {
  auto deadline = std::chrono::steady_clock::now() + kIdleLimit;
  bool idle = true;
  for (const auto &[ctx, c] : a.contexts)
    idle = idle && a.streams.wait_for_idle(
                       ctx, std::chrono::duration_cast<std::chrono::milliseconds>(
                                deadline - std::chrono::steady_clock::now()));
  if (!idle) {
    if (patch) {
      std::lock_guard<std::mutex> lock(a.known_mu);
      a.attaching = false;
      a.deferred.clear();
    }
    return false;
  }
  if (patch)
    patch_known_modules(a);
  else
    unpatch_all_modules(a);
  return true;
}

QuietOutcome patch_at_next_launch(Agent &a, bool patch, std::chrono::milliseconds timeout) {
  {
    // With several contexts a kernel on one GPU may wait for a launch on another (a collective
    // of one process's GPUs): holding launches while waiting for the GPUs could hang the job.
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    if (a.contexts.size() != 1)
      return QuietOutcome::SeveralContexts;
  }
  Quiet asked = patch ? Quiet::Patch : Quiet::Unpatch;
  std::unique_lock<std::mutex> lock(a.quiet_mu);
  a.quiet = asked;
  auto finished = [&] { return a.quiet == Quiet::Done || a.quiet == Quiet::GpuBusy; };
  bool done = a.quiet_cv.wait_for(lock, timeout, finished);
  if (!done && a.quiet.compare_exchange_strong(asked, Quiet::None))
    return QuietOutcome::NoLaunch; // nothing runs, or only graphs
  a.quiet_cv.wait(lock, finished); // a launch is at it
  bool busy = a.quiet == Quiet::GpuBusy;
  a.quiet = Quiet::None;
  return busy ? QuietOutcome::GpuBusy : QuietOutcome::Done;
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
  bool idle;
  {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    idle = patch_when_idle(a, asked == Quiet::Patch);
  }
  set_quiet(a, idle ? Quiet::Done : Quiet::GpuBusy);
}

} // namespace gpubt::agent
