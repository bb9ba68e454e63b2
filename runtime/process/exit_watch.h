// How a process gpubt did not start (-p) ended: its exit code or signal, which only its parent
// can wait for. Root reads it from the kernel's proc connector (netlink, PROC_EVENT_EXIT).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/abi/unique_fd.h"
#include "runtime/process/child_process.h"

namespace gpubt::runtime {

// The exit code (a wait status) of PID in one proc connector message of N bytes, if it is
// PID's own exit event; nothing for any other message (another process's exit, an ack).
std::optional<uint32_t> exit_code_of(int pid, const char *message, size_t n);

class ProcessExitWatch {
public:
  // Starts listening for PID's exit; call before anything can end it. Needs CAP_NET_ADMIN and
  // the initial pid namespace; without them ended() says the status is unknown and why.
  static std::unique_ptr<ProcessExitWatch> start(int pid);

  // Once the process has exited (its pidfd is readable): how, with its name as it was when the
  // watch started. unknown_why is set when the exit event did not come.
  ChildExit ended();

private:
  ProcessExitWatch() = default;
  int pid_ = 0;
  std::string name_;
  UniqueFd socket_;
  std::string error_; // why socket_ is not there
};

} // namespace gpubt::runtime
