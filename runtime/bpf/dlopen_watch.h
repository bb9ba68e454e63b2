// Library loads in a traced process (-c/-p), for probes on a GPU library it has not loaded yet
// (PyTorch dlopens its own libcudart): the process stops at each load, before the new objects'
// constructors run, so the session can attach to what was mapped and let it go on.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <memory>
#include <string>
#include <vector>

struct ring_buffer;

namespace gpubt::runtime {

// A hidden uprobe on ld.so's _dl_debug_state in process PID. glibc calls it (the r_brk hook
// debuggers use) once the objects of a dlopen/dlmopen, or of the program's start, are mapped and
// before they are relocated or initialised; the probe SIGSTOPs the process (bpf_send_signal) and
// wakes a ring buffer. Destroying the watch detaches it.
class LoadWatch {
public:
  // EXE: the program PID runs or will exec (-c: held before exec); empty: /proc/PID/exe. The
  // probe goes on EXE's PT_INTERP, or on gpubt's own ld.so when EXE has none (a script).
  static Result<std::unique_ptr<LoadWatch>> start(int pid, const std::string &exe);
  ~LoadWatch();

  int epoll_fd() const; // readable when the process has hit a load
  // Consumes the wake-ups; true if there were any (the process is stopped, or about to be).
  bool take_loads();

private:
  LoadWatch() = default;
  std::vector<UniqueFd> fds_; // ring buffer map, program, uprobe link
  ring_buffer *rb_ = nullptr;
  size_t loads_ = 0;
};

// Waits up to TIMEOUT_MS until PID is stopped (signal delivery lags bpf_send_signal a little).
bool wait_until_stopped(int pid, int timeout_ms);

} // namespace gpubt::runtime
