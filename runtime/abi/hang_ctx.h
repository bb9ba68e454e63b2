// What a gpu:hang probe's program reads (issue 26): gpubt runs it on the host with
// BPF_PROG_TEST_RUN, as BEGIN, with this record as its context (a raw tracepoint's argument
// array: at most 12 words, read in 4- or 8-byte loads at their own alignment). The kernel's
// name is gpubt's own memory, read with bpf_probe_read_user_str (the test run is gpubt's).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpubt::abi {

struct HangCtx {
  uint64_t kernel = 0;   // address of the NUL-terminated device name (kernel_name.h) in gpubt
  uint64_t since_ns = 0; // launch_start: CLOCK_MONOTONIC, the earliest the launch can have begun
  uint64_t stream = 0;   // args.stream: the CUstream handle (0: the legacy default stream)
  uint64_t seq = 0;      // args.seq: the launch's number on its stream
  uint32_t pid = 0;      // the traced process
  uint32_t device = 0;   // args.device: the CUDA device ordinal
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}; // gdim_*, bdim_*
  uint32_t queued = 0;   // args.queued: launches queued on the stream after it
  uint32_t exact = 0;    // args.exact: 1 when the stream is known to run this very launch
  uint32_t graph = 0;    // args.graph: a CUDA graph replay's kernel nodes (kernel: the first); 0
  uint32_t pad = 0;
};
static_assert(sizeof(HangCtx) == 80 && sizeof(HangCtx) <= 12 * 8);

// gpu:hang's args fields, all unsigned integers of the context.
struct HangArg {
  std::string_view name;
  uint32_t offset, size;
};
inline constexpr HangArg kHangArgs[] = {
    {"stream", offsetof(HangCtx, stream), 8}, {"device", offsetof(HangCtx, device), 4},
    {"seq", offsetof(HangCtx, seq), 8},       {"queued", offsetof(HangCtx, queued), 4},
    {"exact", offsetof(HangCtx, exact), 4},   {"graph", offsetof(HangCtx, graph), 4},
};

} // namespace gpubt::abi
