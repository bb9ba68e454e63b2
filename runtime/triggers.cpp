// The BEGIN/END trigger functions and their file offsets, found from their own addresses via
// /proc/self/maps so that a stripped gpubt still works.
#include "runtime/triggers.h"
#include <cinttypes>
#include <cstdio>
#include <fstream>

extern "C" __attribute__((noinline, used)) void gpubt_begin_trigger() { asm volatile(""); }
extern "C" __attribute__((noinline, used)) void gpubt_end_trigger() { asm volatile(""); }

namespace gpubt::runtime {

Result<UprobeTarget> trigger_target(abi::AttachKind kind) {
  bool begin = kind == abi::AttachKind::Begin;
  auto addr = reinterpret_cast<uint64_t>(begin ? &gpubt_begin_trigger : &gpubt_end_trigger);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start, end, pgoff;
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end,
               &pgoff, &path_at) < 3)
      continue;
    if (addr < start || addr >= end || path_at <= 0)
      continue;
    return UprobeTarget{line.substr(path_at), begin ? "gpubt_begin_trigger" : "gpubt_end_trigger",
                        addr - start + pgoff};
  }
  return make_error("cannot find the BEGIN/END trigger in /proc/self/maps");
}

void fire_trigger(abi::AttachKind kind) {
  if (kind == abi::AttachKind::Begin)
    gpubt_begin_trigger();
  else
    gpubt_end_trigger();
}

} // namespace gpubt::runtime
