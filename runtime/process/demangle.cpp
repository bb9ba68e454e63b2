// Demangling with the C++ runtime's own demangler (what c++filt uses).
#include "runtime/process/demangle.h"

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>

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

} // namespace gpubt::runtime
