// Runs a BEGIN/END or gpu:hang program once with BPF_PROG_TEST_RUN.
#include "runtime/bpf/triggers.h"

#include <bpf/bpf.h>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace gpubt::runtime {

Status run_once(int prog_fd, const void *ctx, size_t ctx_size) {
  uint64_t none[1] = {0}; // a raw tracepoint's argument array; BEGIN/END read none
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx ? ctx : none,
              .ctx_size_in = static_cast<uint32_t>(ctx ? ctx_size : sizeof none));
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0)
    return make_error(std::string("running the probe failed: ") + strerror(errno));
  return Ok{};
}

} // namespace gpubt::runtime
