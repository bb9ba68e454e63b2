// What this kernel supports, probed through libbpf: the kernel half of --info.
#pragma once
#include <cstdio>

namespace gpubt::runtime {

// Prints "Kernel helpers", "Kernel features", "Map types" and "Probe types" in bpftrace 0.17's
// --info layout ("  perf_event_array: yes").
void print_kernel_info(std::FILE *out);

} // namespace gpubt::runtime
