// What a launch-level probe's program reads (issue 25: a gpu:kretprobe /last_thread/ run in
// gpubt once per finished launch, Provider::GpuLaunch): gpubt runs it with BPF_PROG_TEST_RUN, as
// gpu:hang's, with this record as its context. Its first fields are HangCtx's, at HangCtx's
// offsets, so that one lowering reads the builtins both answer (codegen/bpf/lower_hang.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/abi/hang_ctx.h"

namespace gpubt::abi {

struct LaunchCtx {
  uint64_t kernel = 0;   // address of the NUL-terminated device name (kernel_name.h) in gpubt
  uint64_t start_ns = 0; // launch_start: CLOCK_MONOTONIC, when the launch began running
  uint64_t stream = 0;   // the CUstream handle (0: the legacy default stream)
  uint64_t seq = 0;      // the launch's number on its stream
  uint32_t pid = 0;      // the traced process
  uint32_t device = 0;   // the CUDA device ordinal
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}; // gdim_*, bdim_*
  uint64_t end_ns = 0;   // nsecs: CLOCK_MONOTONIC, when its last thread was done
  uint64_t call_ns = 0;  // launch_call: CLOCK_MONOTONIC, the host's launch call (0: unknown)
};
static_assert(sizeof(LaunchCtx) == 80 && sizeof(LaunchCtx) <= 12 * 8);
static_assert(offsetof(LaunchCtx, kernel) == offsetof(HangCtx, kernel) &&
              offsetof(LaunchCtx, start_ns) == offsetof(HangCtx, since_ns) &&
              offsetof(LaunchCtx, stream) == offsetof(HangCtx, stream) &&
              offsetof(LaunchCtx, seq) == offsetof(HangCtx, seq) &&
              offsetof(LaunchCtx, pid) == offsetof(HangCtx, pid) &&
              offsetof(LaunchCtx, device) == offsetof(HangCtx, device) &&
              offsetof(LaunchCtx, grid) == offsetof(HangCtx, grid) &&
              offsetof(LaunchCtx, block) == offsetof(HangCtx, block));

// The fields HangCtx and LaunchCtx share, from a launch as an agent's record gives it (NAME: the
// device name, which must outlive the probe's run).
template <class Ctx, class Launch>
void set_launch_fields(Ctx &ctx, const std::string &name, uint32_t pid, const Launch &l) {
  ctx.kernel = reinterpret_cast<uint64_t>(name.c_str());
  ctx.stream = l.stream;
  ctx.seq = l.seq;
  ctx.pid = pid;
  ctx.device = l.device;
  for (int d = 0; d < 3; ++d)
    ctx.grid[d] = l.grid[d], ctx.block[d] = l.block[d];
}

} // namespace gpubt::abi
