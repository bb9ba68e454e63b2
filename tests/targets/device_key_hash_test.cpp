// The probes' slot search starts where gpubt_key_hash (runtime/abi/device_abi.h) says: with a
// constant key LLVM folds the device hash into the PTX, start = hash & (capacity - 1) (or that
// times entry_size where the offset multiply folds in too).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "runtime/abi/device_abi.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

struct Case {
  const char *script;
  std::vector<uint64_t> words; // the key as device words
};

// The integer constants added to a register in the PTX.
std::set<uint64_t> added_constants(const std::string &ptx) {
  std::set<uint64_t> out;
  std::regex add(R"(add\.s64\s+%rd\d+, %rd\d+, (\d+);)");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), add), end; it != end; ++it)
    out.insert(std::stoull((*it)[1]));
  return out;
}

TEST(DeviceKeyHash, ConstantKeysStartWhereTheAbiHashSays) {
  const Case cases[] = {
      // Assignments: an aggregation under a constant key spreads it over slots by SM
      // (device_map_layout.h, key_spread), which moves the start by a register.
      {"gpu:kretprobe:k { @[42] = 1; }", {42}},
      {"gpu:kretprobe:k { @[123456789] = tid; }", {123456789}},
      {"gpu:kretprobe:k { @[1, 2] = 3; }", {1, 2}},
      {"gpu:kretprobe:k { @[7, 8, 9] = 4; }", {7, 8, 9}},
      {R"(gpu:kretprobe:k { @["abc"] = 5; })", {0x636261}},
      {"gpu:kretprobe:k { @x[5] = 3; }", {5}},
  };
  for (const auto &c : cases) {
    auto compiled = compile_gpu_script(c.script);
    ASSERT_EQ(compiled.error, "") << c.script;
    ASSERT_EQ(compiled.spec.device.maps.size(), 1u) << c.script;
    const auto &m = compiled.spec.device.maps[0];
    ASSERT_EQ(m.key_size, 8 * c.words.size()) << c.script;
    uint64_t start =
        gpubt_key_hash(c.words.data(), uint32_t(c.words.size())) & (m.capacity - 1);
    ASSERT_NE(start, 0u) << c.script << ": pick a key whose start is not 0";
    auto constants = added_constants(compiled.spec.device.ptx);
    EXPECT_TRUE(constants.count(start) || constants.count(start * m.entry_size))
        << c.script << ": start " << start << " not in\n"
        << compiled.spec.device.ptx;
    uint64_t other = 43;
    uint64_t wrong = gpubt_key_hash(&other, 1) & (m.capacity - 1);
    EXPECT_FALSE(constants.count(wrong)) << c.script;
  }
}

} // namespace
} // namespace gpubt::targets::testing
