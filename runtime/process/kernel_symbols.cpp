#include "runtime/process/kernel_symbols.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace gpubt::runtime {
namespace {

using Table = std::vector<std::pair<uint64_t, std::string>>; // sorted by address

const Table &kallsyms() {
  static const Table table = [] {
    Table t;
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string addr, type, name;
      if (!(fields >> addr >> type >> name))
        continue;
      uint64_t a = std::strtoull(addr.c_str(), nullptr, 16);
      if (a != 0 && (type == "t" || type == "T" || type == "w" || type == "W"))
        t.emplace_back(a, name);
    }
    std::sort(t.begin(), t.end());
    return t;
  }();
  return table;
}

} // namespace

std::string kernel_symbol_at(uint64_t address) {
  const Table &t = kallsyms();
  auto it = std::upper_bound(t.begin(), t.end(), std::make_pair(address, std::string()),
                             [](const auto &a, const auto &b) { return a.first < b.first; });
  if (it == t.begin()) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
    return hex;
  }
  --it;
  uint64_t off = address - it->first;
  return off ? it->second + "+" + std::to_string(off) : it->second;
}

} // namespace gpubt::runtime
