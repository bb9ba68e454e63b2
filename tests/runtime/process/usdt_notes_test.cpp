// USDT notes: argument specs in each x86-64 operand form, and the sites of a real test program.
#include "runtime/process/usdt_notes.h"
#include "runtime/process/usdt_probes.h"
#include <gtest/gtest.h>


using namespace gpubt::runtime;

namespace {
const std::string usdt_probes = GPUBT_BINARY_DIR "/tests/programs/usdt_probes";
}

TEST(UsdtNotes, ArgumentSpecs) {
  auto args = parse_usdt_args("-4@%eax 8@-8(%rbp) -2@$-5 1@0x10(%rsp,%rax,8) 8@(%rdi) 4@$0x20");
  ASSERT_TRUE(args.ok()) << args.error();
  ASSERT_EQ(args->size(), 6u);
  const auto &a = *args;
  EXPECT_EQ(a[0].kind, gpubt::abi::UsdtArg::Reg);
  EXPECT_EQ(a[0].reg, "eax");
  EXPECT_EQ(a[0].size, 4u);
  EXPECT_TRUE(a[0].is_signed);
  EXPECT_EQ(a[1].kind, gpubt::abi::UsdtArg::Mem);
  EXPECT_EQ(a[1].reg, "rbp");
  EXPECT_EQ(a[1].value, -8);
  EXPECT_FALSE(a[1].is_signed);
  EXPECT_EQ(a[2].kind, gpubt::abi::UsdtArg::Const);
  EXPECT_EQ(a[2].value, -5);
  EXPECT_EQ(a[3].value, 16);
  EXPECT_EQ(a[3].index_reg, "rax");
  EXPECT_EQ(a[3].scale, 8u);
  EXPECT_EQ(a[4].kind, gpubt::abi::UsdtArg::Mem);
  EXPECT_EQ(a[4].value, 0);
  EXPECT_EQ(a[5].value, 32);
}

TEST(UsdtNotes, BadSpecsSayWhich) {
  auto bad = parse_usdt_args("4@%eax 3@%ebx");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "cannot parse USDT argument '3@%ebx': size 3");
  EXPECT_FALSE(parse_usdt_args("4@foo(%rip").ok());
  EXPECT_FALSE(parse_usdt_args("%eax").ok());
}

TEST(UsdtNotes, SitesOfAProgram) {
  auto sites = read_usdt_sites(usdt_probes);
  ASSERT_TRUE(sites.ok()) << sites.error();
  int twice = 0;
  for (const auto &s : *sites) {
    EXPECT_EQ(s.provider, "gpubt");
    EXPECT_NE(s.offset, 0u);
    EXPECT_NE(s.semaphore, 0u) << s.name; // built with _SDT_HAS_SEMAPHORES
    twice += s.name == "twice";
    if (s.name == "args")
      EXPECT_EQ(s.args.size(), 4u);
  }
  EXPECT_EQ(twice, 2);
}

TEST(UsdtNotes, FindByProviderAndNameSorted) {
  auto sites = find_usdt_sites(usdt_probes, "gpu*", "*s", -1);
  ASSERT_TRUE(sites.ok()) << sites.error();
  std::vector<std::string> names;
  for (const auto &s : *sites)
    names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"args", "constants", "regs"}));
  auto none = find_usdt_sites(usdt_probes, "other", "*", -1);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto missing = find_usdt_sites("/nonexistent/x", "", "*", -1);
  EXPECT_FALSE(missing.ok());
}
