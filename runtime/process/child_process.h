// -c CMD: a child forked before attaching that waits on a pipe until probes are in place, then
// execs the command; its exit ends the session (as in bpftrace).
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <memory>
#include <string>
#include <vector>

namespace gpubt::runtime {

// Splits CMD as a shell would for simple cases: whitespace, '...' and "..." quotes, backslash.
std::vector<std::string> split_command(const std::string &cmd);

class ChildProcess {
public:
  // Resolves argv[0] through $PATH and forks; the child blocks until start().
  static Result<std::unique_ptr<ChildProcess>> spawn(const std::string &command);
  ~ChildProcess(); // a child still running is terminated (SIGTERM, then SIGKILL) and reaped

  int pid() const { return pid_; }
  const std::string &path() const { return path_; } // the binary the child runs
  int pidfd() const { return pidfd_.get(); }        // readable once the child has exited
  Status start();                                   // lets the child exec the command
  bool started() const { return started_; }
  bool exited(); // reaps without blocking
  bool execed(); // the child runs the command now (not still the pre-exec copy of gpubt)
  int exit_status() const { return status_; }

private:
  ChildProcess() = default;
  int pid_ = -1;
  std::string path_;
  UniqueFd go_; // write end of the pipe the child waits on
  UniqueFd pidfd_;
  bool started_ = false, reaped_ = false, execed_ = false;
  int status_ = 0;
};

// pidfd for an existing process (-p), readable once it exits. Error: no such process.
Result<UniqueFd> open_pidfd(int pid);

} // namespace gpubt::runtime
