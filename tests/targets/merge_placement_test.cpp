// A merge instruction the SPIR-V back end left above other instructions moves down to just
// before its block's branch; one in place, or in a block without a branch, stays.
#include <gtest/gtest.h>

#include "targets/spirv/merge_placement.h"

namespace gpubt::targets {
namespace {

using namespace spirv;

std::vector<uint16_t> ops(const std::vector<Inst> &insts) {
  std::vector<uint16_t> out;
  for (const auto &in : insts)
    out.push_back(in.op);
  return out;
}

constexpr uint16_t OpIAdd = 128, OpShiftLeft = 196;

TEST(MergePlacement, MovesMergesDownToTheirBranch) {
  std::vector<Inst> insts = {
      {OpLabel, {1}},         {OpSelectionMerge, {2, 0}}, {OpIAdd, {3, 4, 5, 6}},
      {OpShiftLeft, {3, 7, 4, 5}}, {OpBranchConditional, {8, 2, 9}},
      {OpLabel, {9}},         {OpLoopMerge, {10, 11, 0}}, {OpIAdd, {3, 12, 5, 6}},
      {OpBranch, {13}},       {OpLabel, {2}},            {OpSelectionMerge, {14, 0}},
      {OpBranchConditional, {8, 14, 15}},                 {OpLabel, {14}},
      {OpReturn, {}},
  };
  place_merges_before_branches(insts);
  EXPECT_EQ(ops(insts), (std::vector<uint16_t>{
                            OpLabel, OpIAdd, OpShiftLeft, OpSelectionMerge, OpBranchConditional,
                            OpLabel, OpIAdd, OpLoopMerge, OpBranch,
                            OpLabel, OpSelectionMerge, OpBranchConditional,
                            OpLabel, OpReturn}));
  EXPECT_EQ(insts[3].w, (std::vector<uint32_t>{2, 0})); // the merge itself, unchanged
}

} // namespace
} // namespace gpubt::targets
