// How the CUDA agent calls a PTX probe: a Compute Sanitizer patch runs in every kernel of the
// module it patches, and the Sanitizer keeps one patch per instruction kind in a module.
#pragma once
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "runtime/abi/program_spec.h"

namespace gpubt::targets {

// NAME, the patch: runs DIRECT (NAME_direct, which the agent pastes into the kernels it alone
// matches at its point) only where the context's probe_mask has bit PROBE_BIT.
void add_masked_patch(llvm::Module &m, llvm::Function &direct, const std::string &name,
                      uint32_t probe_bit, unsigned global_address_space);

// Appends to PTX one dispatcher per probe point several PROBES share ("gpubt_dispatch_exit",
// calling each one's patch in probe order), and sets each probe's `patch`: the dispatcher, or its
// own function where it is alone at its point; and, for each memory probe's patch, the patch per
// space the CUDA agent registers (abi::memory_space_patch).
void add_dispatchers(std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes);

} // namespace gpubt::targets
