// One aggregation's value over all CPUs, read inside BPF: the sum of the per-CPU counts and
// sums, the least or greatest min/max value that is set, avg's total over its count. bpftrace's
// CreatePerCpuMapAggElems, for `for ($kv : @m)` over a map of count, sum, min, max or avg, whose
// callback is handed only this CPU's value.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// The i64 value of KEY (a pointer the map's helpers take) in per-CPU map MAP_INDEX of
// aggregation type VT, through bpf_map_lookup_percpu_elem (Linux 5.19) for CPUs 0 .. NUM_CPUS-1,
// stopping at the first CPU the kernel does not have.
llvm::Value *percpu_aggregate_value(LowerCtx &c, int map_index, const frontend::Type &vt,
                                    llvm::Value *key, uint32_t num_cpus);

} // namespace gpubt::codegen::bpf
