// The guard process (see stop_guard.h). It runs in a fork of a possibly multi-threaded gpubt,
// so it only makes system calls: no allocation, no stdio.
#include "runtime/bpf/stop_guard.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace gpubt::runtime {
namespace {

// The state letter of /proc/PID/stat, read without allocating; '?' when it cannot be read.
char state_of(int pid) {
  char path[32] = "/proc/";
  char digits[12];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(pid); n == 0 || v; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  size_t at = 6;
  while (n)
    path[at++] = digits[--n];
  memcpy(path + at, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return '?';
  char buf[512];
  ssize_t len = read(fd, buf, sizeof buf);
  close(fd);
  for (ssize_t i = len - 1; i > 0; --i) // comm may hold ") ", the last one ends it
    if (buf[i] == ')' && i + 2 < len)
      return buf[i + 2];
  return '?';
}

void continue_if_stopped(int pidfd, int pid) {
  if (state_of(pid) == 'T')
    syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, nullptr, 0);
}

void close_all_but(int a, int b) {
  if (a > b)
    std::swap(a, b);
  unsigned ranges[3][2] = {
      {3, unsigned(a) - 1}, {unsigned(a) + 1, unsigned(b) - 1}, {unsigned(b) + 1, ~0u}};
  for (auto &r : ranges)
    if (r[0] <= r[1] && syscall(SYS_close_range, r[0], r[1], 0) != 0)
      for (unsigned fd = r[0]; fd <= r[1] && fd < 65536; ++fd)
        close(static_cast<int>(fd));
}

[[noreturn]] void guard(int done, int pidfd, int pid, int gpubt) {
  prctl(PR_SET_NAME, "gpubt-guard");
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP})
    signal(sig, SIG_IGN); // a Ctrl-C or Ctrl-Z to the terminal's group must leave it watching
  close_all_but(done, pidfd);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC); // nor gpubt's stdout: a reader awaits its EOF
  for (int fd = 0; null >= 0 && fd < 3; ++fd)
    dup2(null, fd);
  pollfd p{done, POLLIN, 0};
  while (true) {
    int n = poll(&p, 1, 100);
    if (n < 0 && errno != EINTR)
      _exit(1);
    if (n > 0) {
      char c;
      if (read(done, &c, 1) == 1)
        _exit(0); // gpubt released the process itself
      // gpubt is gone; a stop its probe sent just before may still be on its way
      for (int i = 0; i < 5; ++i) {
        continue_if_stopped(pidfd, pid);
        usleep(20 * 1000);
      }
      _exit(0);
    }
    char self = state_of(gpubt);
    if (self == 'T' || self == 't') // gpubt is stopped and cannot release it
      continue_if_stopped(pidfd, pid);
  }
}

} // namespace

Result<std::unique_ptr<StopGuard>> StopGuard::start(int pid) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0)
    return make_error("failed to open process " + std::to_string(pid) + ": " + strerror(errno));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) {
    close(pidfd);
    return make_error(std::string("pipe: ") + strerror(errno));
  }
  int gpubt = getpid();
  pid_t child = fork();
  if (child == 0) {
    close(fds[1]);
    guard(fds[0], pidfd, pid, gpubt);
  }
  close(fds[0]);
  close(pidfd);
  if (child < 0) {
    close(fds[1]);
    return make_error(std::string("fork: ") + strerror(errno));
  }
  std::unique_ptr<StopGuard> g(new StopGuard());
  g->guard_pid_ = child;
  g->done_ = UniqueFd(fds[1]);
  return g;
}

StopGuard::~StopGuard() {
  char done = 'd';
  (void)!write(done_.get(), &done, 1);
  done_.reset();
  waitpid(guard_pid_, nullptr, 0);
}

} // namespace gpubt::runtime
