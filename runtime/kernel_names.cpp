// Demangling with the C++ runtime's own demangler (what c++filt uses), and the kernel-names
// map lookup for CUfunction/CUkernel handles learned by codegen's hidden probes.
#include "runtime/kernel_names.h"

#include <bpf/bpf.h>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

#include "runtime/abi/program_spec.h"

namespace gpubt::runtime {

std::string demangle_symbol(std::string_view name) {
  if (name.substr(0, 2) != "_Z")
    return std::string(name);
  int status = 0;
  std::string mangled(name);
  char *out = ::abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out)
    return mangled;
  std::string s(out);
  free(out);
  return s;
}

std::string kernel_name(uint64_t addr, const Symbolizer &symbolize) {
  std::string s = symbolize ? symbolize(addr) : "";
  if (s.empty()) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
    return buf;
  }
  if (s.rfind("0x", 0) == 0)
    return s;
  if (auto plus = s.rfind("+0x"); plus != std::string::npos)
    s.resize(plus);
  return demangle_symbol(s);
}

Symbolizer with_kernel_names(Symbolizer base, int names_fd) {
  if (names_fd < 0)
    return base;
  return [base = std::move(base), names_fd](uint64_t addr) -> std::string {
    char name[abi::kKernelNameSize] = {};
    if (bpf_map_lookup_elem(names_fd, &addr, name) == 0 && name[0])
      return std::string(name, strnlen(name, sizeof name));
    return base(addr);
  };
}

} // namespace gpubt::runtime
