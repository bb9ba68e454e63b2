// gpu probes in CUDA processes that are already running: gpubt attaches to their dormant agents
// (started with CUDA_INJECTION64_PATH and no config; runtime/abi/agent_control.h), with -p to
// one, else to every one this user may reach and every one that starts meanwhile. At the end
// it detaches: each process is unpatched and sends back its maps.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

#include "runtime/abi/agent_control.h"
#include "runtime/abi/agent_folders.h"
#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include "runtime/gpu/gpu_inject.h"

namespace gpubt::runtime {

class GpuAttach {
public:
  struct Options {
    abi::GpuBackend backend = abi::GpuBackend::Auto;
    bool verbose = false;
    pid_t pid = 0; // 0: every agent, now and later
    // Spec map index -> gpubt's fd of the BPF map behind each host<->GPU map (Session's).
    std::map<int, int> host_map_fds;
    uint32_t live_ms = 0; // prepare_gpu_run's
    bool watch_launches = false; // prepare_gpu_run's
  };
  // Assembles the probes and attaches. Error (for the user): with a pid, that process could not
  // be attached (no agent, another user's, refused).
  static Result<std::unique_ptr<GpuAttach>> start(const abi::ProgramSpec &spec, Options options,
                                                   std::ostream &err);
  ~GpuAttach();

  size_t attached() const { return attached_count_; }
  // The printf records received so far (taken).
  std::vector<uint8_t> take_events(); // and each process's latest live maps record
  // Detaches from every process (waiting up to a few seconds for each one's results) and
  // returns what they sent, merged; MESSAGES: what each agent said, prefixed by its pid.
  abi::AgentResults finish(std::ostream &err);

private:
  struct Link {
    pid_t pid = 0;
    UniqueFd fd;
    bool done = false; // its results came, or it went away
  };
  explicit GpuAttach(GpuRun run) : run_(std::move(run)) {}
  // Connects to SOCKET, the agent of process PID (agent_peer.h), sends the attach and waits for
  // the answer (until stop_); error: why not.
  Status attach(const abi::AgentSocket &socket, pid_t pid);
  // Queues attach() for one of a few worker threads, which warn when it fails; wait_attaches()
  // waits until the queue is empty and none is in progress, stop_attaches() ends the workers.
  // The workers are few whatever the number of sockets: anyone can make any number of socket
  // names in a folder of their own, and a thread for each ran a root gpubt out of threads.
  void start_attach(const abi::AgentSocket &socket);
  void start_attaches(const std::vector<abi::AgentSocket> &found);
  void attach_worker();
  void wait_attaches();
  void stop_attaches();
  bool wait_readable(int fd, std::chrono::steady_clock::time_point deadline) const;
  void loop(); // new agents (no pid), frames from attached ones
  void read_frame(Link &link);
  void print_log(pid_t pid, const std::string &text); // mu_ held

  Options options_;
  GpuRun run_;
  std::string attach_bytes_; // the Attach frame's blobs, the same for every process
  std::vector<int> fds_;     // sent with it
  std::ostream *err_ = nullptr;
  std::mutex mu_;
  std::vector<std::unique_ptr<Link>> links_;
  // Sockets tried (by path, so that another user's socket named after a process cannot keep
  // its real one from being tried), with when each may be tried again (start_attach's lock):
  // a failed one with a backoff, an attached one or one whose process is gone never.
  struct Retry {
    int failures = 0;
    std::chrono::steady_clock::time_point next;
  };
  std::map<std::string, Retry> tried_;
  std::set<pid_t> attached_pids_; // under mu_
  // The sockets of FOUND due for a try (not attached, no backoff running), marked as tried.
  std::vector<abi::AgentSocket> due(const std::vector<abi::AgentSocket> &found);
  // After a try of SOCKET: when it may be tried again, and whether to warn (its first failure).
  bool note_failure(const abi::AgentSocket &socket, bool gone);
  std::vector<uint8_t> events_; // at most kMaxEventBytes (gpu_attach.cpp) not yet taken
  // Each process's latest LiveMaps and RunningLaunches records not yet taken.
  std::map<std::pair<pid_t, abi::EventKind>, std::string> live_;
  std::map<pid_t, uint64_t> events_dropped_; // bytes of records past it, by process
  abi::AgentResults results_;
  std::atomic<size_t> attached_count_ = 0;
  std::atomic<bool> stop_ = false;
  std::thread thread_;
  // start_attach's queue and workers (made and joined by one thread at a time).
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<abi::AgentSocket> queued_;
  size_t attaching_ = 0; // attach() calls in progress on the workers
  std::vector<std::thread> workers_;
};

// Why PID cannot be attached to when it has no agent socket this user can see.
std::string no_agent_reason(pid_t pid);
// PID was started with its agent in timing mode (abi::kTimingMode in its environment): its
// launch-level gpu probes run in gpubt, and it takes no probe that runs in the kernels.
bool agent_in_timing_mode(pid_t pid);

} // namespace gpubt::runtime
