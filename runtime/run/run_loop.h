// The one event loop of a trace run, whatever its probes: the session's ring buffers and
// library loads (host probes), the agents' records (gpu probes), the -c child's or -p
// process's end, and the signals of runtime/process/stop_signals.h.
#pragma once
#include <functional>

#include "runtime/bpf/session.h"
#include "runtime/process/child_process.h"

namespace gpubt::runtime {

struct LoopSources {
  // Host probes: the session's events go to HANDLER, and the session says when the loop ends
  // (exit(), SIGINT/SIGTERM, the output failed, the -c child's or -p process's end).
  Session *session = nullptr;
  EventHandler *handler = nullptr;
  // Without a session: a -c child, whose end ends the loop (Ctrl-C reaches it too: the loop
  // waits for it), or else -p's pidfd (or -1), whose end or a signal ends it.
  ChildProcess *child = nullptr;
  int exit_fd = -1;
  // Readable when the agents sent records (-1: none to wait on), and what prints them, called
  // on each turn (at least every 200 ms: an attached agent's records have no fd to wait on).
  int events_fd = -1;
  std::function<void()> print_events;
};

// Starts the session's -c child, then runs until one of the ends above; returns which.
StopReason run_loop(const LoopSources &sources);

} // namespace gpubt::runtime
