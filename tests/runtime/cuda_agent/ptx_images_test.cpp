// The PTX backend's image substitution on images nvcc builds here: fatbins (zstd-compressed PTX),
// PTX text and cubins; the instrumented result assembled with the real ptxas.
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/cuda_agent/ptx_images.h"
#include "runtime/ptx/cubin_functions.h"
#include "tests/support/nvcc_support.h"

using namespace gpubt;
using namespace gpubt::agent;
using gpubt::runtime::ptx::cubin_symbols;
using namespace gpubt::runtime::testing;

namespace {

class PtxImagesTest : public NvccSuite<PtxImagesTest> {
public:
  static void build(const std::string &dir, std::string &errors) {
    std::string src = kPtxSources + "kernels.cu", log;
    for (auto [flags, out] : {std::pair{"-fatbin -arch=sm_90", "k.fatbin"},
                              {"-fatbin -gencode arch=compute_75,code=compute_75", "k75.fatbin"},
                              {"-cubin -arch=sm_90", "k.cubin"},
                              {"-ptx -arch=sm_90", "k.ptx"}})
      if (run_tool(std::string(kNvcc) + " " + flags + " -o " + dir + "/" + out + " " + src,
                   &log) != 0)
        errors += log;
    if (run_tool(std::string(kNvcc) + " -ptx -arch=sm_90 -o " + dir + "/mem.ptx " + kPtxSources +
                     "mem_kernels.cu",
                 &log) != 0)
      errors += log;
  }

protected:
  void SetUp() override {
    NvccSuite::SetUp();
    config_.cubins = {
        {"sm_90", "/nonexistent.cubin", kPtxSources + "count_probes_direct_sm90.ptx", ""}};
    config_.device.probes = {{"gpu:kretprobe:vector_add",
                              "vector_add",
                              {gpubt::abi::ProbePointKind::Exit},
                              "gpubt_probe_1",
                              "gpubt_probe_1"},
                             {"gpu:kprobe:scale",
                              "scale",
                              {gpubt::abi::ProbePointKind::Entry},
                              "gpubt_probe_0",
                              "gpubt_probe_0"}};
  }
  std::string assemble(const std::string &ptx) {
    std::string path = dir_ + "/out.ptx", log;
    std::ofstream(path) << ptx;
    return run_tool(std::string(kPtxasTool) + " -arch=sm_90 -o " + dir_ + "/out.cubin " + path,
                    &log) == 0
               ? ""
               : log;
  }
  gpubt::abi::AgentConfig config_;
};

TEST_F(PtxImagesTest, FatbinGetsItsMatchingKernelsInstrumented) {
  PtxImages images(config_);
  auto fatbin = read_bytes(dir_ + "/k.fatbin");
  Substitution sub = images.substitute(fatbin.data(), 90, 90);
  ASSERT_TRUE(sub.image) << sub.why;
  // vector_add and the three scale<> instantiations; early_exits, trap_or_exit, say untouched.
  EXPECT_EQ(sub.image->kernels.size(), 4u);
  EXPECT_EQ(sub.image->kernels[0], "vector_add");
  EXPECT_EQ(sub.image->symbol.rfind(kUserdataPrefix, 0), 0u);
  EXPECT_NE(sub.image->ptx.find(".u64 " + sub.image->symbol + "[4]"), std::string::npos);
  EXPECT_EQ(assemble(sub.image->ptx), "");
  EXPECT_EQ(images.by_symbol(sub.image->symbol), sub.image);
  // The same image again: the cached text, not a second copy.
  EXPECT_EQ(images.substitute(fatbin.data(), 90, 90).image, sub.image);
}

TEST_F(PtxImagesTest, PtxTextAndOlderPtxAreInstrumented) {
  PtxImages images(config_);
  std::string ptx = read_text(dir_ + "/k.ptx");
  Substitution text = images.substitute(ptx.c_str(), 90, 90);
  ASSERT_TRUE(text.image) << text.why;
  EXPECT_EQ(assemble(text.image->ptx), "");
  auto fatbin75 = read_bytes(dir_ + "/k75.fatbin");
  Substitution old = images.substitute(fatbin75.data(), 90, 90);
  ASSERT_TRUE(old.image) << old.why;
  EXPECT_NE(old.image->symbol, text.image->symbol);
  EXPECT_NE(old.image->ptx.find(".target sm_90"), std::string::npos); // raised for the probes
  EXPECT_EQ(assemble(old.image->ptx), "");
}

// Memory-access and barrier probes (issue 28): the kernels they match get a call before each
// access of the probe's kinds and spaces and before each barrier; others stay as they are.
TEST_F(PtxImagesTest, MemoryAndBarrierProbesGoIntoTheirKernels) {
  config_.cubins[0].ptx = kPtxSources + "mem_probes_sm90.ptx";
  config_.device.probes = {{"gpu:store:shared:reverse_block",
                            "reverse_block",
                            {gpubt::abi::ProbePointKind::MemoryAccess,
                             gpubt::abi::AccessWrite | gpubt::abi::AccessShared},
                            "gpubt_probe_0",
                            "gpubt_probe_0"},
                           {"gpu:barrier:reverse_block",
                            "reverse_block",
                            {gpubt::abi::ProbePointKind::Barrier},
                            "gpubt_probe_1",
                            "gpubt_probe_1"}};
  PtxImages images(config_);
  std::string ptx = read_text(dir_ + "/mem.ptx");
  Substitution sub = images.substitute(ptx.c_str(), 90, 90);
  ASSERT_TRUE(sub.image) << sub.why;
  EXPECT_EQ(sub.image->kernels, std::vector<std::string>{"reverse_block"});
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = sub.image->ptx.find(what); at != std::string::npos;
         at = sub.image->ptx.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("// gpubt: memory probe"), 2u); // count = 0 and tile[t] = ...
  EXPECT_EQ(count("// gpubt: barrier probe"), 2u);
  EXPECT_EQ(assemble(sub.image->ptx), "");
}

TEST_F(PtxImagesTest, WhatStaysAsItIs) {
  PtxImages images(config_);
  auto cubin = read_bytes(dir_ + "/k.cubin");
  Substitution sub = images.substitute(cubin.data(), 90, 90);
  EXPECT_FALSE(sub.image);
  EXPECT_EQ(sub.why, "it is a cubin (no PTX)");
  // sm_90 PTX cannot run on an sm_80 GPU: no PTX for it.
  auto fatbin = read_bytes(dir_ + "/k.fatbin");
  sub = images.substitute(fatbin.data(), 80, 90);
  EXPECT_FALSE(sub.image);
  EXPECT_EQ(sub.why, "it has no PTX for sm_80");
  // No kernel matches: nothing to say.
  config_.device.probes = {{"gpu:kprobe:gemm",
                            "gemm",
                            {gpubt::abi::ProbePointKind::Entry},
                            "gpubt_probe_0",
                            "gpubt_probe_0"}};
  PtxImages none(config_);
  sub = none.substitute(fatbin.data(), 90, 90);
  EXPECT_FALSE(sub.image);
  EXPECT_EQ(sub.why, "");
  // gpubt gave no probe PTX (an old config): the SASS backend's.
  config_.device.probes = {{"gpu:kprobe:say",
                            "say",
                            {gpubt::abi::ProbePointKind::Entry},
                            "gpubt_probe_0",
                            "gpubt_probe_0"}};
  config_.cubins[0].ptx = "";
  PtxImages no_probes(config_);
  sub = no_probes.substitute(fatbin.data(), 90, 90);
  EXPECT_FALSE(sub.image);
  EXPECT_EQ(sub.why, "there is no probe PTX for sm_90");
  // A corrupt PTX payload: an error, no crash.
  const uint8_t zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
  auto frame = std::search(fatbin.begin(), fatbin.end(), zstd_magic, zstd_magic + 4);
  ASSERT_LT(fatbin.end() - frame, fatbin.end() - fatbin.begin()) << "no zstd PTX in the fatbin";
  for (auto at = frame + 16; at < frame + 80 && at < fatbin.end(); ++at)
    *at ^= 0x5a;
  PtxImages corrupt(config_);
  sub = corrupt.substitute(fatbin.data(), 90, 90);
  EXPECT_FALSE(sub.image);
  EXPECT_NE(sub.why.find("fatbin is unreadable"), std::string::npos) << sub.why;
}

} // namespace

namespace {

TEST_F(PtxImagesTest, AnInstrumentedCubinNamesItsImage) {
  PtxImages images(config_);
  auto fatbin = read_bytes(dir_ + "/k.fatbin");
  Substitution sub = images.substitute(fatbin.data(), 90, 90);
  ASSERT_TRUE(sub.image) << sub.why;
  ASSERT_EQ(assemble(sub.image->ptx), "");
  auto cubin = read_bytes(dir_ + "/out.cubin");
  auto symbols = cubin_symbols(cubin.data(), cubin.size());
  ASSERT_TRUE(symbols);
  EXPECT_NE(std::find(symbols->begin(), symbols->end(), sub.image->symbol), symbols->end());
  EXPECT_NE(std::find(symbols->begin(), symbols->end(), "vector_add"), symbols->end());
  EXPECT_FALSE(cubin_symbols(fatbin.data(), fatbin.size()));
}

} // namespace
