// Demangling with the C++ ABI library and fnmatch against the three spellings of a kernel name.
#include "runtime/ptx/kernel_match.h"

#include <cstdlib>
#include <cxxabi.h>
#include <fnmatch.h>

namespace gpubt::runtime::ptx {
namespace {

// "void ns::k<int>(float*, int)" -> "k": drop the parameter list, the return type, the
// qualifiers and the template arguments, at bracket depth 0 only.
std::string base_name(const std::string &sig) {
  size_t end = sig.size();
  if (end && sig[end - 1] == ')') {
    int depth = 0;
    for (size_t i = end; i-- > 0;) {
      depth += sig[i] == ')' ? 1 : sig[i] == '(' ? -1 : 0;
      if (depth == 0) {
        end = i;
        break;
      }
    }
  }
  std::string name = sig.substr(0, end);
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    depth += c == '<' || c == '(' ? 1 : c == '>' || c == ')' ? -1 : 0;
    if (depth == 0 && (c == ' ' || (c == ':' && i + 1 < name.size() && name[i + 1] == ':')))
      start = i + (c == ' ' ? 1 : 2);
  }
  name = name.substr(start);
  size_t lt = name.find('<');
  return lt == std::string::npos || lt == 0 ? name : name.substr(0, lt);
}

} // namespace

KernelNames kernel_names(const std::string &name) {
  KernelNames n{name, name, name};
  int status = 0;
  char *d = ::abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d) {
    n.demangled = d;
    n.base = base_name(n.demangled);
  }
  std::free(d);
  return n;
}

bool kernel_matches(const std::string &pattern, const KernelNames &n) {
  for (const std::string *s : {&n.base, &n.demangled, &n.mangled})
    if (fnmatch(pattern.c_str(), s->c_str(), 0) == 0)
      return true;
  return false;
}

uint64_t probe_mask(const std::vector<abi::DeviceProbeSpec> &probes, const KernelNames &names) {
  uint64_t mask = 0;
  for (size_t i = 0; i < probes.size() && i < 64; ++i)
    if (kernel_matches(probes[i].kernel, names))
      mask |= uint64_t(1) << i;
  return mask;
}

} // namespace gpubt::runtime::ptx
