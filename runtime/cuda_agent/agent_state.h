// The agent's state, shared by its callbacks (agent.cpp) and by attaching to and detaching from
// a running process (attach_session.cpp). Everything is guarded by Agent::mu.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include <cuda.h>
#include <sanitizer.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/cuda_agent/context_memory.h"
#include "runtime/cuda_agent/control_server.h"
#include "runtime/cuda_agent/gpu_clock.h"
#include "runtime/cuda_agent/idle_wait.h"
#include "runtime/cuda_agent/launch_timer.h"
#include "runtime/cuda_agent/launch_watch.h"
#include "runtime/cuda_agent/live_copier.h"
#include "runtime/cuda_agent/ptx_images.h"
#include "runtime/ptx/kernel_match.h"

namespace gpubt::agent {

// A kernel's probe mask and userdata. ERROR: why it runs uninstrumented (empty when the
// context's memory failed: said already).
struct KernelSetup {
  uint64_t mask = 0;
  void *userdata = nullptr;
  std::string error;
};

// A traced context.
struct Context {
  int device = -1;
  int sm = 0; // compute capability, 90
  // Made at the first launch in a patched module: at creation, a context made with cuCtxCreate
  // is not ready for memsets yet (SANITIZER_ERROR_NOT_READY on the H100).
  std::optional<ContextMemory> memory;
  bool memory_failed = false;
  std::vector<uint64_t> launches;       // per probe
  std::set<CUmodule> patched;           // modules with probe code in them
  std::map<CUfunction, uint64_t> masks; // functions whose userdata is set
  std::map<CUfunction, void *> kernel_ctxs; // their userdata (mask != 0)
  // Functions whose Compute Sanitizer callback data points into this context's memory, with
  // their module. The callback data outlives a detach: it must be cleared before the memory is
  // freed, or the next session's patches run with the last one's freed userdata (issue 23).
  std::map<CUfunction, CUmodule> callback_data;
  std::map<CUmodule, const PtxImage *> ptx_modules; // loaded from an instrumented image
  std::map<CUmodule, CUdeviceptr> userdata;         // their userdata arrays
  std::map<std::pair<CUmodule, std::string>, KernelSetup> prepared; // at load, by mangled name
  bool detaching = false; // its modules were unpatched for a detach: launches are not traced
  bool before_launch_failed = false;
  bool said_stream_writes = false;
  bool write_back_failed = false;
};

// What a dormant agent knows of the process, to trace it when gpubt attaches.
struct KnownContext {
  int device = -1;
  int sm = 0;
};
struct KnownModule {
  CUcontext context = nullptr;
  bool readable = false;              // its functions could be read from the cubin
  std::vector<std::string> functions; // mangled names (the rest is derived when attaching)
};

struct Agent {
  abi::AgentConfig config;
  Sanitizer_SubscriberHandle subscriber = nullptr;
  std::recursive_mutex mu; // sanitizer calls made in a callback may call back
  std::map<CUcontext, std::unique_ptr<Context>> contexts;
  abi::AgentResults results; // finished contexts and messages
  // The base names of the kernels of every module the probes were matched against: the results
  // carry them when a probe ran in no launch, for gpubt's "did you mean" (AgentResults::kernels).
  std::set<std::string> loaded_kernels;
  pid_t pid = getpid();      // the process that loaded the agent
  std::unique_ptr<PtxImages> images;
  std::unique_ptr<ClockService> clock; // measures each context's GPU clock
  int max_isa = 0; // the highest PTX ISA the driver takes
  std::map<std::string, std::string> ptx_files; // instrumented images written for file loads
  std::atomic<bool> launch_callbacks = false; // on once some module holds probe code

  // Dormant (started without a config) until gpubt attaches over the control socket.
  bool tracing = false;  // a config is in force: from the start (-c), or while attached
  bool attached = false; // tracing for a gpubt attached over the control socket
  bool exiting = false;  // at_exit ran: the process is ending
  bool retired = false;  // a detach found the GPU busy: probes stay in, tracing for nobody
  bool stream_events = false; // attached, the probes printf: records go to gpubt per launch
  std::unique_ptr<ControlServer> control;
  // What the process has loaded, kept (under known_mu, not mu) only by a dormant-capable agent.
  // While gpubt attaches (attaching), a module loaded meanwhile is left in `deferred` for the
  // attaching thread instead of waiting for mu in a callback.
  std::mutex known_mu;
  std::map<CUcontext, KnownContext> known_contexts;
  std::map<CUmodule, KnownModule> known_modules;
  bool attaching = false;
  std::vector<CUmodule> deferred;
  // The Compute Sanitizer's patching calls must be serialized (sanitizer_patching.h); callbacks
  // only try it (held by a detaching gpubt: the module stays unpatched).
  std::mutex patch_mu;
  std::vector<int> received_fds; // BPF map fds gpubt sent, closed at detach

  // Patching or unpatching a module while its kernels run rewrites code under them (an illegal
  // instruction in cuBLAS on the H200, issue 23): attach and detach ask the next kernel launch to
  // do it on the launching thread once every traced context is idle (quiet_patching.cpp).
  enum class Quiet { None, Patch, Unpatch, Busy, Done, GpuBusy };
  std::mutex quiet_mu;
  std::condition_variable quiet_cv;
  std::atomic<Quiet> quiet{Quiet::None};
  StreamSet streams; // the program's streams, polled for an idle GPU (idle_wait.h)

  // config.live_ms: the maps sent while the program runs, and the lock of the -c socket's
  // writers (printf records after launches, the copier's records).
  std::unique_ptr<LiveCopier> live;
  std::mutex events_send_mu;
  // config.watch_launches: which launch each stream runs (gpu:hang). One for the agent's life:
  // callbacks on any thread call it without a.mu.
  LaunchWatch watch;
  // config.time_launches with no gpu probe in the kernels: every launch timed (launch_timer.h).
  LaunchTimer timer;
};

std::string result_text(SanitizerResult r);
// A "gpubt:" line on stderr, also sent to gpubt with the results.
void say(Agent &a, const std::string &msg);
// A -v line: on stderr, or to the attached gpubt.
void note(Agent &a, const std::string &line);
// A warning the attached gpubt prints at once, -v or not (on stderr when none is attached).
void warn(Agent &a, const std::string &line);
std::unique_ptr<ClockService> make_clock_service(Agent &a);
void enable_launch_callbacks(Agent &a);
void disable_launch_callbacks(Agent &a);
// The graph replay callbacks a.watch needs, on or off (with the launch callbacks).
void enable_graph_watch(Agent &a, bool on);
// Loads the probe code into CTX and starts tracing it (a.config in force).
void trace_context(Agent &a, CUcontext ctx, const KnownContext &known);
// Patches MODULE's kernels that match a probe (a.config in force, CTX traced). FROM_CALLBACK:
// called in a Compute Sanitizer callback, where the patch lock is only tried (else deferred).
void patch_module(Agent &a, CUcontext ctx, CUmodule module, const KnownModule &known,
                  bool from_callback);
// RESULTS.kernels: the kernels loaded, when one of the probes ran in no launch of RESULTS' images.
void add_loaded_kernels(const Agent &a, abi::AgentResults &results);
// CTX's maps and counts, read back and released (its launches must be over); the kernels whose
// names were shortened join KERNEL_NAMES. The live copier (if any) lets go of it first; if it
// cannot, the memory is neither read nor freed.
abi::DeviceImage close_context(Agent &a, CUcontext ctx, Context &c,
                               std::map<std::string, std::string> &kernel_names);
// Starts the live copier when a.config asks for one (ATTACHED: records go on the control socket).
void start_live_copier(Agent &a, bool attached);
// At the end of tracing (a.results holding every context's counts): when no probe ran in any
// launch and CUPTI is in the process, says that it hid the launches.
void say_if_profiled(Agent &a);
// Starts a.watch when a.config asks for it (the same records' way), launch callbacks on.
void start_launch_watch(Agent &a, bool attached);

// Quiet patching (quiet_patching.cpp): how long a patch or unpatch waits for the GPU to go idle.
inline constexpr std::chrono::milliseconds kIdleLimit{2000};
enum class QuietOutcome {
  Done,            // a launch did it while the GPU was idle
  GpuBusy,         // a launch tried, but the GPU did not go idle within kIdleLimit: not done
  NoLaunch,        // no launch came (nothing runs, or only graphs): the caller does it
  SeveralContexts, // launches are not held (see there): the caller does it
};
// On the control socket's thread: asks the next launch to patch every known module (PATCH) or
// to unpatch every patched one (else) and waits up to TIMEOUT for a launch to take it.
QuietOutcome patch_at_next_launch(Agent &a, bool patch, std::chrono::milliseconds timeout);
// a.mu held (no launch starts meanwhile): patches (PATCH) or unpatches once the traced contexts
// are idle; false, with nothing done, when they are not within kIdleLimit.
bool patch_when_idle(Agent &a, bool patch);
// In a launch callback (not a graph node's) on STREAM, before a.mu: does what was asked, if
// anything, unless the launch is being captured into a graph.
void run_quiet_patching(Agent &a, CUstream stream);
// Patches every module the process has loaded into the traced contexts; the deferred list ends.
void patch_known_modules(Agent &a);
// Unpatches every patched module and clears the callback data (a.mu held); launches after it are
// not traced.
void unpatch_all_modules(Agent &a);

// The Compute Sanitizer's callback (every domain the agent subscribes to).
void sanitizer_callback(void *userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                        const void *cbdata);
// CTX's results into a.results and its memory released (its launches must be over).
void finish_context(Agent &a, CUcontext ctx);
// a.results into RESULTS.PID when the config names a results path.
void write_results(Agent &a);
// The highest PTX ISA this process's driver takes (0: unknown).
int driver_ptx_isa();
// Writes SIZE bytes of whole records to -c's socket FD, under the lock of its writers (a launch's
// printf records, the live copier's maps). False (errno set) when gpubt is gone.
bool send_records(Agent &a, int fd, const uint8_t *bytes, size_t size);

// Attaching (attach_session.cpp): the control socket's handler.
ControlServer::Handler attach_handler(Agent &a);
// The same for an agent in timing mode (abi::kTimingMode, timing_session.cpp): each attach times
// the launches with a.timer until its detach; a script with probes in the kernels is refused.
ControlServer::Handler timing_attach_handler(Agent &a);
// Attach's config from its blobs (config text, cubins) and the BPF map fds it names.
Result<abi::AgentConfig> attach_config(std::vector<std::string> &blobs, const std::vector<int> &fds);
void close_fds(std::vector<int> &fds);
// Where a live record goes: the control socket (ATTACHED), else -c's socket.
std::function<bool(const std::string &)> record_sender(Agent &a, bool attached);

} // namespace gpubt::agent
