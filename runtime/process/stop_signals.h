// SIGINT, SIGTERM and (with a session) SIGUSR1 while gpubt traces: installed in one place, by
// runtime/run's tracer, and read by whatever waits (the tracer's loop, the session's ring buffer
// callback, which ends a consume early so that the loop sees the signal).
#pragma once

namespace gpubt::runtime {

// Installs the handlers for its lifetime (without RESTART, a blocking call other than poll and
// epoll_wait, which never restart, also returns with EINTR; with it, only they do: gpu probes
// without a session, whose attach and detach threads must not see EINTR); the old ones come back after, and the flags below are cleared. USR1: SIGUSR1 asks for every map to print (bpftrace's
// SIGUSR1); without it, SIGUSR1 keeps its default action.
class StopSignals {
public:
  StopSignals(bool usr1, bool restart);
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

private:
  bool usr1_;
};

bool stop_signalled();       // SIGINT or SIGTERM came while the handlers are installed
bool print_maps_requested(); // SIGUSR1 came and was not yet taken
bool take_print_maps_request();

} // namespace gpubt::runtime
