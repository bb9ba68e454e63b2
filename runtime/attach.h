// Attaches a loaded program to every event its probe names (wildcards expanded).
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/unique_fd.h"
#include <vector>

namespace gpubt::runtime {

// The perf events PROBE's program now runs on; empty when a pattern matched nothing.
// PID > 0 limits uprobes to that process (-p / -c); BEGIN/END always watch only gpubt itself.
Result<std::vector<UniqueFd>> attach_probe(const abi::ProbeSpec &probe, int prog_fd, int pid);

} // namespace gpubt::runtime
