// Merge instructions back before their blocks' branches (see merge_placement.h).
#include "targets/spirv/merge_placement.h"

#include <utility>

namespace gpubt::targets {

using namespace spirv;

void place_merges_before_branches(std::vector<Inst> &insts) {
  for (size_t i = 0; i < insts.size(); ++i) {
    if (insts[i].op != OpSelectionMerge && insts[i].op != OpLoopMerge)
      continue;
    size_t branch = i + 1;
    while (branch < insts.size() && insts[branch].op != OpBranch &&
           insts[branch].op != OpBranchConditional && insts[branch].op != OpSwitch &&
           insts[branch].op != OpLabel)
      ++branch;
    if (branch == insts.size() || insts[branch].op == OpLabel || branch == i + 1)
      continue; // no branch in this block (spirv-val says so), or in place already
    Inst merge = std::move(insts[i]);
    insts.erase(insts.begin() + i);
    insts.insert(insts.begin() + (branch - 1), std::move(merge));
  }
}

} // namespace gpubt::targets
