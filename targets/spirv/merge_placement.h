// LLVM 22's SPIR-V back end sometimes leaves instructions between a block's OpSelectionMerge or
// OpLoopMerge and its branch (spirv-val: "OpSelectionMerge must immediately precede either an
// OpBranchConditional or OpSwitch instruction"), seen in probes with an if/else updating keyed
// maps. A merge instruction only declares the block's structure, so it moves down to just
// before the branch; the instructions it passes keep their order.
#pragma once
#include <vector>

#include "runtime/abi/spirv_words.h"

namespace gpubt::targets {

void place_merges_before_branches(std::vector<spirv::Inst> &insts);

} // namespace gpubt::targets
