// The kernel-names map lookup for CUfunction/CUkernel handles learned by codegen's hidden probes.
#include "runtime/bpf/kernel_names.h"

#include <bpf/bpf.h>
#include <cstring>

#include "runtime/abi/program_spec.h"
#include "runtime/process/object_symbols.h"

namespace gpubt::runtime {

Symbolizer with_kernel_names(Symbolizer base, int names_fd, int pid) {
  return [base = std::move(base), names_fd, pid](uint64_t addr) -> std::string {
    char name[abi::kKernelNameSize] = {};
    if (names_fd >= 0 && bpf_map_lookup_elem(names_fd, &addr, name) == 0 && name[0])
      return std::string(name, strnlen(name, sizeof name));
    std::string s = base(addr);
    if (pid > 0 && s.rfind("0x", 0) == 0)
      if (std::string obj = object_symbol(pid, addr); !obj.empty())
        return obj;
    return s;
  };
}

} // namespace gpubt::runtime
