// A snapshot of one BPF map as read from the kernel: what the loader reads and the printers print.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct MapEntry {
  std::vector<uint8_t> key;
  std::vector<std::vector<uint8_t>> values; // one per possible CPU for per-CPU maps, else one
};
using MapData = std::vector<MapEntry>;

// Turns a user-space address into "symbol" or "symbol+off" for UserSym values (func).
using Symbolizer = std::function<std::string(uint64_t addr)>;

} // namespace gpubt::runtime
