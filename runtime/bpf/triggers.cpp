// Runs a BEGIN/END program once with BPF_PROG_TEST_RUN.
#include "runtime/bpf/triggers.h"

#include <bpf/bpf.h>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace gpubt::runtime {

Status run_once(int prog_fd) {
  uint64_t args[1] = {0}; // a raw tracepoint's argument array; BEGIN/END read none
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0)
    return make_error(std::string("running BEGIN/END failed: ") + strerror(errno));
  return Ok{};
}

} // namespace gpubt::runtime
