// The loop (see run_loop.h): one poll set, 200 ms turns.
#include "runtime/run/run_loop.h"

#include <poll.h>
#include <vector>

#include "runtime/process/stop_signals.h"

namespace gpubt::runtime {

StopReason run_loop(const LoopSources &src) {
  Session *session = src.session;
  int exit_fd = session ? session->exit_fd() : src.child ? src.child->pidfd() : src.exit_fd;
  if (session)
    session->start();
  for (;;) {
    if (session) {
      if (auto stop = session->serve(*src.handler))
        return *stop;
    } else if (!src.child && stop_signalled()) {
      return StopReason::Signal;
    }
    if (src.print_events)
      src.print_events();
    std::vector<pollfd> fds;
    if (exit_fd >= 0)
      fds.push_back({exit_fd, POLLIN, 0});
    if (session)
      for (int fd : session->wait_fds())
        fds.push_back({fd, POLLIN, 0});
    if (src.events_fd >= 0)
      fds.push_back({src.events_fd, POLLIN, 0});
    int n = poll(fds.data(), fds.size(), 200);
    if (session)
      session->after_wait(*src.handler);
    if (n > 0 && exit_fd >= 0 && (fds[0].revents & POLLIN)) {
      if (session)
        return session->exited(*src.handler);
      if (!src.child || src.child->exited())
        return StopReason::ChildExited;
    }
  }
}

} // namespace gpubt::runtime
