// -c CMD: a child forked before attaching that waits on a pipe until probes are in place, then
// execs the command; its exit ends the session (as in bpftrace).
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpubt::runtime {

// Splits CMD as a shell would for simple cases: whitespace, '...' and "..." quotes, backslash.
std::vector<std::string> split_command(const std::string &cmd);

// The binary CMD's argv[0] names, through $PATH. Error: empty, not found, not executable.
Result<std::string> resolve_command(const std::string &command);

// How a child ended on its own; the driver words it and picks gpubt's exit status.
struct ChildExit {
  int pid = -1;
  std::string name;    // the command's argv[0], without its folder
  std::string path;    // the binary it was to run
  bool exited = false; // it called exit(): STATUS is its exit code
  int status = 0;
  int signal = 0;     // it was killed by this signal
  int exec_errno = 0; // the command could not be executed (execv's errno); it never ran
  std::string unknown_why; // it ended, but how is not known (-p: see exit_watch.h)
};

class ChildProcess {
public:
  // Resolves argv[0] through $PATH and forks; the child blocks until start(). With
  // STDOUT_TO_STDERR the command's standard output is gpubt's standard error.
  static Result<std::unique_ptr<ChildProcess>> spawn(const std::string &command,
                                                     bool stdout_to_stderr = false);
  ~ChildProcess(); // a child still running is terminated (SIGTERM, then SIGKILL) and reaped

  int pid() const { return pid_; }
  const std::string &path() const { return path_; } // the binary the child runs
  int pidfd() const { return pidfd_.get(); }        // readable once the child has exited
  Status start();                                   // lets the child exec the command
  bool started() const { return started_; }
  bool exited(); // reaps without blocking
  bool execed(); // the child runs the command now (not still the pre-exec copy of gpubt)
  int exit_status() const { return status_; }
  // Once reaped: how it ended. nullopt while it runs, or when gpubt terminated it.
  std::optional<ChildExit> exit_info() const;

private:
  ChildProcess() = default;
  int pid_ = -1;
  std::string path_;
  UniqueFd go_; // write end of the pipe the child waits on
  UniqueFd pidfd_;
  UniqueFd exec_error_; // read end: the child writes execv's errno here when it fails
  std::string name_;
  bool started_ = false, reaped_ = false, execed_ = false, terminated_ = false;
  int status_ = 0, exec_errno_ = 0;
};

// pidfd for an existing process (-p), readable once it exits. Error: no such process.
Result<UniqueFd> open_pidfd(int pid);

} // namespace gpubt::runtime
