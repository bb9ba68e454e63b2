// The agent's start in the process (traced from the start, dormant, or timing launches only),
// its end at exit, and the threads that send live records.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <sanitizer.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/cuda_agent/agent_state.h"
#include "runtime/cuda_agent/ptx_images.h"

namespace gpubt::agent {

std::function<bool(const std::string &)> record_sender(Agent &a, bool attached) {
  return [&a, attached](const std::string &record) {
    if (attached)
      return a.control->send_events(record);
    return send_records(a, a.config.live_fd, reinterpret_cast<const uint8_t *>(record.data()),
                        record.size());
  };
}

void start_live_copier(Agent &a, bool attached) {
  if (!a.config.live_ms || (!attached && a.config.live_fd < 0))
    return;
  if (a.live) // an earlier session's, stuck in a copy: left to the process's end
    (void)a.live.release();
  auto collect = [&a](LiveCopier &copier, abi::AgentResults &finished) {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    std::vector<LiveCopier::Source> sources;
    for (const auto &[ctx, c] : a.contexts)
      if (c->memory)
        sources.push_back({ctx, c->device, c->memory->map_ranges()});
    for (const auto &img : a.results.images) // contexts gone already (-c): their last maps
      finished.images.push_back({img.device, {}, img.maps, {}, 0});
    copier.begin_round(sources);
    return sources;
  };
  auto report = [&a](const std::string &why) {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    say(a, why);
  };
  a.live = std::make_unique<LiveCopier>(std::chrono::milliseconds(a.config.live_ms), collect,
                                        record_sender(a, attached), report);
}

void start_launch_watch(Agent &a, bool attached) {
  if (!a.config.watch_launches || !a.config.live_ms || (!attached && a.config.live_fd < 0))
    return;
  a.watch.start(std::chrono::milliseconds(a.config.live_ms), record_sender(a, attached));
  // On already, maybe without LAUNCH_END: only that is added (off meanwhile, a traced launch
  // could miss its LAUNCH_BEGIN).
  if (a.launch_callbacks) {
    sanitizerEnableCallback(1, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH, SANITIZER_CBID_LAUNCH_END);
    enable_graph_watch(a, true);
  } else
    enable_launch_callbacks(a);
}

namespace {

Agent *g_agent = nullptr;

// What the process creates, loads and destroys: every mode needs it.
void enable_resource_callbacks(Agent &a) {
  for (auto cbid :
       {SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED, SANITIZER_CBID_RESOURCE_MODULE_LOADED,
        SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
        SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, SANITIZER_CBID_RESOURCE_STREAM_CREATED,
        SANITIZER_CBID_RESOURCE_STREAM_DESTROY_STARTING})
    sanitizerEnableCallback(1, a.subscriber, SANITIZER_CB_DOMAIN_RESOURCE, cbid);
}

void at_exit() {
  Agent &a = *g_agent;
  if (getpid() != a.pid)
    return; // a fork()ed copy: the contexts are its parent's
  a.clock.reset(); // stops its thread, which may be waiting for a.mu
  std::string copies = stop_copier(a.live, a.config.verbose); // the same
  a.watch.stop();
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  if (!copies.empty())
    say(a, copies);
  a.exiting = true;
  while (!a.contexts.empty())
    finish_context(a, a.contexts.begin()->first);
  say_if_profiled(a);
  add_loaded_kernels(a, a.results); // (write_results does too, but only with a results file)
  write_results(a);
  if (a.control) // an attached gpubt gets the results now
    a.control->finish(a.attached ? abi::write_agent_results(a.results) : std::string());
  sanitizerUnsubscribe(a.subscriber);
}

// Without a config: only the resource callbacks that say what the process loads, and the
// control socket gpubt attaches through.
int start_dormant(Agent &a) {
  a.subscriber = nullptr;
  if (sanitizerSubscribe(&a.subscriber, sanitizer_callback, &a) != SANITIZER_SUCCESS)
    return 1; // nothing traced, nothing said: the program is someone's production job
  auto control = ControlServer::start(attach_handler(a));
  if (!control) {
    std::fprintf(stderr, "gpubt: the agent cannot take attach requests (%s): the program runs "
                         "untraced\n", control.error().c_str());
    sanitizerUnsubscribe(a.subscriber);
    return 1;
  }
  a.control = std::move(*control);
  enable_resource_callbacks(a);
  g_agent = &a;
  std::atexit(at_exit);
  if (a.config.verbose)
    std::fprintf(stderr, "gpubt: agent dormant, listening on %s\n", a.control->path().c_str());
  return 1;
}

// A timing agent's end: -c's records and results file, or an attached gpubt's last records and
// its results.
void at_exit_timing() {
  Agent &a = *g_agent;
  if (getpid() != a.pid)
    return;
  a.timer.stop();
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  a.exiting = true;
  write_results(a);
  if (a.control)
    a.control->finish(a.attached ? abi::write_agent_results(a.results) : std::string());
}

// Started with GPUBT_AGENT_MODE=timing and no config: the control socket only, nothing
// subscribed, until an attach times the launches (timing_session.cpp).
int start_timing_dormant(Agent &a) {
  auto control = ControlServer::start(timing_attach_handler(a));
  if (!control) {
    std::fprintf(stderr, "gpubt: the agent cannot take attach requests (%s): the program runs "
                         "untraced\n", control.error().c_str());
    return 1;
  }
  a.control = std::move(*control);
  g_agent = &a;
  std::atexit(at_exit_timing);
  if (a.config.verbose)
    std::fprintf(stderr, "gpubt: agent dormant (timing mode: launches timed by CUPTI from an "
                         "attach), listening on %s\n", a.control->path().c_str());
  return 1;
}

// gpu probes that all run in gpubt, from each launch's times (-c): CUPTI times the launches and
// the Sanitizer is never subscribed (both cannot be in one process: launch_timer.h).
int start_timing_only(Agent &a) {
  std::string e = a.config.live_fd < 0
                      ? "no socket to send them on"
                      : a.timer.start(std::chrono::milliseconds(a.config.live_ms ? a.config.live_ms : 100),
                                      record_sender(a, false),
                                      a.config.time_launch_calls
                                          ? LaunchTimer::CallTimes::FromCallRecords
                                          : LaunchTimer::CallTimes::None);
  if (!e.empty())
    say(a, "cannot time kernel launches (" + e + "): launch-level gpu probes see no launch");
  g_agent = &a;
  std::atexit(at_exit_timing);
  if (a.config.verbose) {
    std::string how = e.empty() ? ", " + std::string(LaunchTimer::describe(a.timer.call_times()))
                                : " (failed)";
    std::fprintf(stderr, "gpubt: agent loaded, launches timed by CUPTI%s\n", how.c_str());
  }
  return 1;
}

int start() {
  const char *path = std::getenv("GPUBT_AGENT_CONFIG");
  if (!path) {
    auto *a = new Agent; // lives until exit: callbacks may come from any thread
    a->config.verbose = std::getenv("GPUBT_AGENT_VERBOSE") != nullptr;
    const char *mode = std::getenv(abi::kAgentModeVar);
    if (mode && std::string(mode) == abi::kTimingMode)
      return start_timing_dormant(*a);
    if (mode && *mode)
      std::fprintf(stderr, "gpubt: %s=%s is no mode of the agent (%s, or unset): it starts "
                           "dormant as if unset\n", abi::kAgentModeVar, mode, abi::kTimingMode);
    return start_dormant(*a);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto config = abi::parse_agent_config(text.str());
  if (!in || !config) {
    std::fprintf(stderr, "gpubt: cannot read the agent config %s: %s\n", path,
                 config ? "unreadable" : config.error().c_str());
    return 1;
  }
  auto *a = new Agent; // lives until exit: callbacks may come from any thread
  a->config = std::move(*config);
  a->tracing = true;
  if (std::getenv("GPUBT_AGENT_VERBOSE"))
    a->config.verbose = true;
  if (a->config.time_launches && a->config.device.probes.empty() && !a->config.watch_launches)
    return start_timing_only(*a);
  SanitizerResult r = sanitizerSubscribe(&a->subscriber, sanitizer_callback, a);
  if (r != SANITIZER_SUCCESS) {
    say(*a, "sanitizerSubscribe failed (" + result_text(r) + "): running uninstrumented");
    write_results(*a);
    return 1;
  }
  enable_resource_callbacks(*a);
  for (const auto &h : a->config.host_maps)
    if (h.to_host) {
      for (auto cbid : {SANITIZER_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED,
                        SANITIZER_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED})
        sanitizerEnableCallback(1, a->subscriber, SANITIZER_CB_DOMAIN_SYNCHRONIZE, cbid);
      break;
    }
  if (a->config.backend != abi::GpuBackend::Sass) {
    a->images = std::make_unique<PtxImages>(a->config);
    a->max_isa = driver_ptx_isa();
    for (auto cbid : {SANITIZER_CBID_DRIVER_API_cuLibraryLoadData,
                      SANITIZER_CBID_DRIVER_API_cuLibraryLoadFromFile,
                      SANITIZER_CBID_DRIVER_API_cuModuleLoad,
                      SANITIZER_CBID_DRIVER_API_cuModuleLoadData,
                      SANITIZER_CBID_DRIVER_API_cuModuleLoadDataEx,
                      SANITIZER_CBID_DRIVER_API_cuModuleLoadFatBinary})
      sanitizerEnableCallback(1, a->subscriber, SANITIZER_CB_DOMAIN_DRIVER_API, cbid);
  }
  // Without nsecs the clock's measuring kernel (every 100 ms, then every second) is not run.
  if (a->config.reads_clock())
    a->clock = make_clock_service(*a);
  start_live_copier(*a, false);
  start_launch_watch(*a, false);
  g_agent = a;
  std::atexit(at_exit);
  if (a->config.verbose)
    std::fprintf(stderr, "gpubt: agent loaded, %zu gpu probes\n", a->config.device.probes.size());
  return 1;
}

} // namespace
} // namespace gpubt::agent

// Called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit; 1 means loaded.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  static std::once_flag once;
  static int status = 1;
  std::call_once(once, [] { status = gpubt::agent::start(); });
  return status;
}
