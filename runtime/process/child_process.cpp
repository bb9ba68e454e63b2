// fork/exec of the -c command, held back on a pipe until the probes are attached.
#include "runtime/process/child_process.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/fd_limit.h"
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <sys/prctl.h>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gpubt::runtime {

std::vector<std::string> split_command(const std::string &cmd) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < cmd.size(); ++i) {
    char c = cmd[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < cmd.size())
        cur += cmd[++i];
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < cmd.size()) {
      cur += cmd[++i];
      in_word = true;
    } else if (isspace(static_cast<unsigned char>(c))) {
      if (in_word)
        out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word)
    out.push_back(std::move(cur));
  return out;
}

Result<UniqueFd> open_pidfd(int pid) {
  int fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return make_error("failed to open process " + std::to_string(pid) + ": " + strerror(errno));
  return UniqueFd(fd);
}

Result<std::string> resolve_command(const std::string &command) {
  auto args = split_command(command);
  if (args.empty())
    return make_error("Failed to fork child: empty command");
  auto path = find_in_path(args[0]);
  if (!path)
    return make_error("Failed to fork child: path '" + args[0] +
                      "' does not exist or is not executable");
  return *path;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const std::string &command,
                                                          bool stdout_to_stderr) {
  auto path = resolve_command(command);
  if (!path)
    return make_error(path.error());
  auto args = split_command(command);
  int fds[2], errs[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return make_error(std::string("Failed to fork child: pipe: ") + strerror(errno));
  // Closed by a successful exec; a failed one leaves its errno in it for exit_info().
  if (pipe2(errs, O_CLOEXEC) < 0) {
    close(fds[0]);
    close(fds[1]);
    return make_error(std::string("Failed to fork child: pipe: ") + strerror(errno));
  }
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], errs[0], errs[1]})
      close(fd);
    return make_error(std::string("Failed to fork child: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[1]);
    close(errs[0]);
    // The program ends with gpubt however gpubt ends (kill -9, SIGHUP), as bpftrace's child does;
    // SIGKILL rather than bpftrace's SIGTERM because a child held stopped at exit() ignores
    // SIGTERM. It survives exec. A gpubt that died before the prctl closed the pipe: the read
    // below sees EOF. (No getppid() check: tests count the child's getppid calls.)
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
      _exit(0);
    char go = 0;
    ssize_t n;
    while ((n = read(fds[0], &go, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1)
      _exit(0); // the tracer went away before starting us
    if (stdout_to_stderr)
      dup2(STDERR_FILENO, STDOUT_FILENO);
    restore_fd_limit();
    execv(path->c_str(), argv.data());
    int err = errno;
    (void)!write(errs[1], &err, sizeof err);
    _exit(127);
  }
  close(fds[0]);
  close(errs[1]);
  fcntl(errs[0], F_SETFL, O_NONBLOCK); // another fork of gpubt may hold the write end too
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->path_ = *path;
  child->name_ = args[0].substr(args[0].rfind('/') + 1);
  child->exec_error_ = UniqueFd(errs[0]);
  child->go_ = UniqueFd(fds[1]);
  auto pidfd = open_pidfd(pid);
  if (!pidfd)
    return make_error(pidfd.error());
  child->pidfd_ = std::move(*pidfd);
  return child;
}

Status ChildProcess::start() {
  if (started_)
    return Ok{};
  char go = 1;
  if (write(go_.get(), &go, 1) != 1)
    return make_error(std::string("failed to start the child: ") + strerror(errno));
  go_.reset();
  started_ = true;
  return Ok{};
}

bool ChildProcess::exited() {
  if (reaped_)
    return true;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = st;
    int err = 0;
    if (read(exec_error_.get(), &err, sizeof err) == sizeof err)
      exec_errno_ = err;
  }
  return reaped_;
}

std::optional<ChildExit> ChildProcess::exit_info() const {
  if (!reaped_ || terminated_)
    return std::nullopt;
  ChildExit e{pid_, name_, path_, WIFEXITED(status_), 0, 0, 0};
  if (e.exited)
    e.status = WEXITSTATUS(status_);
  else if (WIFSIGNALED(status_))
    e.signal = WTERMSIG(status_);
  e.exec_errno = exec_errno_;
  return e;
}

bool ChildProcess::execed() {
  if (execed_ || !started_)
    return execed_;
  char buf[PATH_MAX];
  ssize_t n = readlink(("/proc/" + std::to_string(pid_) + "/exe").c_str(), buf, sizeof(buf) - 1);
  char *want = realpath(path_.c_str(), nullptr);
  if (n > 0 && want) {
    buf[n] = 0;
    execed_ = strcmp(buf, want) == 0;
  }
  free(want);
  return execed_;
}

ChildProcess::~ChildProcess() {
  go_.reset(); // an unstarted child reads EOF and exits
  if (pid_ <= 0 || exited())
    return;
  terminated_ = true;
  if (started_)
    kill(pid_, SIGTERM);
  for (int i = 0; i < 100 && !exited(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!exited()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

} // namespace gpubt::runtime
