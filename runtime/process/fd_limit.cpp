// Raising and restoring RLIMIT_NOFILE (see fd_limit.h).
#include "runtime/process/fd_limit.h"

#include <cerrno>
#include <cstring>
#include <sys/resource.h>

namespace gpubt::runtime {
namespace {
rlimit g_original{};
bool g_raised = false;
} // namespace

void raise_fd_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
    return;
  g_original = rl;
  rl.rlim_cur = rl.rlim_max;
  g_raised = setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

void restore_fd_limit() {
  if (g_raised) // a program using select() must not see descriptors past FD_SETSIZE
    setrlimit(RLIMIT_NOFILE, &g_original);
}

unsigned long fd_limit() {
  rlimit rl{};
  return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
}

bool out_of_fds(int err) { return err == EMFILE || err == ENFILE; }

std::string error_text(int err) {
  std::string why = std::strerror(err);
  if (out_of_fds(err))
    why += " (the open-file limit is " + std::to_string(fd_limit()) + ")";
  return why;
}

} // namespace gpubt::runtime
