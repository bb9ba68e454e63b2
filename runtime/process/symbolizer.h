// User-space address -> function name for a process, through /proc/PID/maps and ELF symbols.
#pragma once
#include "runtime/abi/map_data.h"
#include <cstdint>
#include <string>

namespace gpubt::runtime {

// "func" (or "func+0x10" with show_offset when not at the start); an address that no symbol
// covers (or a process that has exited) prints as bpftrace does: "0x55d2de39118c".
// The process's mappings are read once and re-read on a miss; symbols are cached per file.
std::string symbolize_user(int pid, uint64_t addr, bool show_offset = false);

// A Symbolizer bound to `pid`, for the map printers (UserSym values, `func`).
Symbolizer make_process_symbolizer(int pid, bool show_offset = false);

// Reads and caches PID's mappings now (e.g. while a short-lived child is still alive, so
// its addresses can be symbolized after it exits). Returns false when the process is gone.
bool snapshot_process_maps(int pid);

} // namespace gpubt::runtime
