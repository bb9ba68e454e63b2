#include "runtime/process/kernel_symbols.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace gpubt::runtime {

const std::vector<KernelSymbol> &kernel_symbols() {
  static const std::vector<KernelSymbol> table = [] {
    std::vector<KernelSymbol> t;
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string addr, type, name;
      if (!(fields >> addr >> type >> name))
        continue;
      uint64_t a = std::strtoull(addr.c_str(), nullptr, 16);
      if (a != 0)
        t.push_back({a, type == "t" || type == "T" || type == "w" || type == "W", name});
    }
    std::stable_sort(t.begin(), t.end(), [](const KernelSymbol &x, const KernelSymbol &y) {
      return x.address < y.address;
    });
    return t;
  }();
  return table;
}

std::string kernel_symbol_at(uint64_t address) {
  const auto &t = kernel_symbols();
  auto it = std::upper_bound(t.begin(), t.end(), address,
                             [](uint64_t a, const KernelSymbol &s) { return a < s.address; });
  while (it != t.begin() && !std::prev(it)->text)
    --it;
  if (it == t.begin()) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
    return hex;
  }
  const KernelSymbol &s = *std::prev(it);
  uint64_t off = address - s.address;
  return off ? s.name + "+" + std::to_string(off) : s.name;
}

} // namespace gpubt::runtime
