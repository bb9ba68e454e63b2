// Whether this process may load BPF programs and open perf events, asked up front: without it
// the kernel's answers (EPERM on a map, a tracefs it cannot read) do not say what is missing.
#pragma once
#include "runtime/abi/result.h"

namespace gpubt::runtime {

// Ok for root, or for a user with CAP_BPF and CAP_PERFMON in its effective set.
Status check_bpf_privileges();

} // namespace gpubt::runtime
