// Attaching to a job whose agent is in timing mode (abi::kTimingMode): no Compute Sanitizer in
// the process, so each attach times every launch with CUPTI (launch_timer.h) and sends the
// finished launches on the control socket until the detach; gpubt runs the launch-level probes
// from them. Nothing in the program's kernels changes, so nothing waits for an idle GPU here.
#include <string>
#include <unistd.h>
#include <vector>

#include "runtime/cuda_agent/agent_state.h"

namespace gpubt::agent {
namespace {

// Launch records reach gpubt at most this late when its config names no period.
constexpr std::chrono::milliseconds kDefaultPeriod{250};

std::string timing_only_refusal() {
  return std::string("this process's agent is in timing mode (started with ") +
         abi::kAgentModeVar + "=" + abi::kTimingMode +
         "): it times launches and runs no probe in the kernels, and this script has gpu probes "
         "that must run there";
}

Result<std::string> attach(Agent &a, std::vector<std::string> blobs, std::vector<int> fds) {
  auto config = attach_config(blobs, fds);
  close_fds(fds); // no map is shared with the kernels: the probes run in gpubt
  if (!config)
    return make_error(config.error());
  if (!config->device.probes.empty() || config->watch_launches)
    return make_error(timing_only_refusal());
  if (!config->time_launches)
    return make_error("the script has no launch-level gpu probe to time launches for");
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  if (a.tracing || a.exiting)
    return make_error(a.exiting ? "the process is exiting" : "the process is traced already");
  auto period = config->live_ms ? std::chrono::milliseconds(config->live_ms) : kDefaultPeriod;
  a.config = std::move(*config);
  a.results = {};
  a.tracing = a.attached = true;
  // A running job's CUDA started before CUPTI: the call records do not come (launch_timer.h).
  auto calls = a.config.time_launch_calls ? LaunchTimer::CallTimes::FromCallbacks
                                          : LaunchTimer::CallTimes::None;
  if (std::string e = a.timer.start(period, record_sender(a, true), calls);
      !e.empty()) {
    a.config = {};
    a.tracing = a.attached = false;
    return make_error("cannot time kernel launches: " + e);
  }
  return "process " + std::to_string(getpid()) +
         ": launches timed by CUPTI (timing mode: no kernel patched), " +
         LaunchTimer::describe(a.timer.call_times());
}

std::string detach(Agent &a) {
  {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    if (!a.attached || a.exiting)
      return {};
  }
  a.timer.stop(); // its last records go out first, on the control socket (not under a.mu)
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  std::string bytes = abi::write_agent_results(a.results);
  a.results = {};
  a.config = {};
  a.tracing = a.attached = false;
  return bytes;
}

} // namespace

ControlServer::Handler timing_attach_handler(Agent &a) {
  return {[&a](std::vector<std::string> blobs, std::vector<int> fds) {
            return attach(a, std::move(blobs), std::move(fds));
          },
          [&a] { return detach(a); }};
}

} // namespace gpubt::agent
