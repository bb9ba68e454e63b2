// Entry points that share a function get a copy each (entry_functions.h): the copy validates, has
// its execution modes and decorations, and literals that look like ids are left alone.
#include "runtime/vulkan/entry_functions.h"

#include <gtest/gtest.h>
#include <map>
#include <spirv-tools/libspirv.hpp>

#include "runtime/abi/spirv_words.h"

namespace gpubt::runtime::vulkan {
namespace {

// Two entry points on one function, whose body has a decorated value and a literal (the
// OpCompositeExtract index 0 and the OpSwitch literals) equal to ids the copy renames.
constexpr const char *kShared = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %f "a" %gid
               OpEntryPoint GLCompute %f "b" %gid
               OpExecutionMode %f LocalSize 8 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %x RelaxedPrecision
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
        %ptr = OpTypePointer Input %v3uint
        %gid = OpVariable %ptr Input
          %f = OpFunction %void None %fn
      %entry = OpLabel
          %v = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %v 0
               OpSelectionMerge %done None
               OpSwitch %x %done 12 %twelve 13 %done
     %twelve = OpLabel
               OpBranch %done
       %done = OpLabel
               OpReturn
               OpFunctionEnd
)";

std::vector<uint32_t> assemble(const char *text) {
  std::vector<uint32_t> words;
  EXPECT_TRUE(spvtools::SpirvTools(SPV_ENV_VULKAN_1_0).Assemble(text, &words));
  return words;
}

TEST(EntryFunctions, EachMatchedEntryPointGetsItsOwnFunction) {
  auto module = assemble(kShared);
  auto out = give_entries_own_functions(module, {"a", "b"});
  ASSERT_TRUE(out) << out.error();
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_0);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char *, const spv_position_t &,
                               const char *m) { messages += m; });
  EXPECT_TRUE(tools.Validate(*out)) << messages;
  spirv::Module m;
  ASSERT_TRUE(m.parse(out->data(), out->size()));
  std::map<std::string, uint32_t> fn;
  int modes = 0, relaxed = 0, functions = 0, switches = 0;
  for (const auto &in : m.insts) {
    if (in.op == spirv::OpEntryPoint)
      fn[spirv::string_at(in, 2)] = in.w[1];
    modes += in.op == spirv::OpExecutionMode;
    relaxed += in.op == spirv::OpDecorate && in.w[1] == 0; // RelaxedPrecision
    functions += in.op == spirv::OpFunction;
    if (in.op == spirv::OpSwitch) {
      EXPECT_EQ(in.w[2], 12u); // literals kept
      EXPECT_EQ(in.w[4], 13u);
      ++switches;
    }
  }
  EXPECT_NE(fn["a"], fn["b"]);
  EXPECT_EQ(modes, 2);
  EXPECT_EQ(relaxed, 2);
  EXPECT_EQ(functions, 2);
  EXPECT_EQ(switches, 2);
}

TEST(EntryFunctions, UnsharedOrUnmatchedModulesAreLeftAlone) {
  auto module = assemble(kShared);
  auto out = give_entries_own_functions(module, {"c"});
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, module);
  auto one = give_entries_own_functions(module, {"a"}); // a copy for a, b keeps the original
  ASSERT_TRUE(one) << one.error();
  EXPECT_GT(one->size(), module.size());
}

TEST(EntryFunctions, NotSpirvIsAnError) {
  std::vector<uint32_t> junk{1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(give_entries_own_functions(junk, {"a"}));
}

} // namespace
} // namespace gpubt::runtime::vulkan
