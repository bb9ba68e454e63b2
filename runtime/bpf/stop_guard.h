// A -p process that gpubt stops (held at exit(), or at a library load while probes are
// pending) must not stay stopped because gpubt died or was itself stopped (kill -9, Ctrl-Z):
// a small guard process, forked before the holds are armed, sends it SIGCONT then.
#pragma once
#include <memory>

#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

class StopGuard {
public:
  // Forks the guard for process PID. It keeps no descriptor but its pipe and PID's pidfd (a
  // copy of a probe's would keep the probe attached after gpubt died).
  static Result<std::unique_ptr<StopGuard>> start(int pid);
  // gpubt has let the process go itself: the guard exits without touching it.
  ~StopGuard();

private:
  StopGuard() = default;
  int guard_pid_ = -1;
  UniqueFd done_; // write end: a byte says "released", EOF alone says "gpubt is gone"
};

} // namespace gpubt::runtime
