// Python frames of a running process (see python_threads.h), with process_vm_readv.
#include "runtime/process/python_threads.h"

#include <sys/uio.h>

namespace gpubt::runtime {
namespace {

constexpr int kInterpreters = 16, kThreads = 256, kFrames = 1024;

// *(u64 *)ADDR in PID; 0 where it cannot be read.
uint64_t word(int pid, uint64_t addr) {
  uint64_t v = 0;
  iovec local{&v, sizeof v}, remote{reinterpret_cast<void *>(addr), sizeof v};
  return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) == ssize_t(sizeof v) ? v : 0;
}

} // namespace

std::vector<abi::PyStackFrame> python_frames_now(int pid, const PythonInterpreter &py) {
  const auto &p = py.process;
  std::vector<abi::PyStackFrame> out;
  uint64_t interp = word(pid, p.runtime + p.interpreters_head);
  for (int i = 0; interp && i < kInterpreters; ++i) {
    uint64_t ts = word(pid, interp + p.threads_head);
    for (int t = 0; ts && t < kThreads; ++t, ts = word(pid, ts + p.thread_next)) {
      uint64_t holder = p.cframe == abi::kPyNoOffset ? ts : word(pid, ts + p.cframe);
      uint64_t frame = holder ? word(pid, holder + p.current_frame) : 0;
      for (int f = 0; frame && f < kFrames; ++f, frame = word(pid, frame + p.frame_previous)) {
        uint64_t owner = word(pid, frame + p.frame_owner) & 0xff;
        uint64_t code = word(pid, frame + p.frame_code) & abi::kPyCodeMask;
        out.push_back({code | owner << abi::kPyOwnerShift, 0});
      }
    }
    interp = word(pid, interp + p.interpreter_next);
  }
  return out;
}

} // namespace gpubt::runtime
