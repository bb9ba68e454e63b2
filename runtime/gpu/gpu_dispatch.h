// The Compute Sanitizer keeps one patch per instruction kind in a module: a second
// sanitizerPatchInstructions(BLOCK_EXIT, ...) replaces the first (seen on the H100). When several
// gpu probes share a patch point, one dispatcher function per point calls each of them (each
// returns at once unless its probe_mask bit is set) and the agent patches the dispatcher.
#pragma once
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"

namespace gpubt::runtime {

// Appends the dispatchers PROBES need to PTX and points those probes' `function` at them.
std::string add_dispatchers(const std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes);

} // namespace gpubt::runtime
