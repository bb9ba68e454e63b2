// The PTX backend's path for block probes and active_lanes, short of a GPU: the probes compiled
// from a script, pasted (runtime/ptx instrument_ptx, as the CUDA agent does) into the PTX nvcc
// makes of tests/gpu/divergence.cu (early returns, a divergent branch), and the whole module
// assembled by the real ptxas as a program, not a patch.
#include <gtest/gtest.h>

#include "runtime/abi/device_abi.h"
#include "runtime/ptx/ptx_instrument.h"
#include "tests/support/nvcc_support.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

using runtime::testing::have_cuda_tools;
using runtime::testing::kNvcc;
using runtime::testing::kPtxasTool;
using runtime::testing::make_temp_dir;
using runtime::testing::read_text;
using runtime::testing::run_tool;

// SCRIPT's probes 0 (entry) and 1 (exit) in diverge(); "" when ptxas takes the module.
std::string paste_and_assemble(const std::string &script) {
  auto c = compile_gpu_script(script);
  if (!c.error.empty())
    return "compile: " + c.error;
  std::string dir = make_temp_dir(), log;
  std::string src = std::string(GPUBT_SOURCE_DIR) + "/tests/gpu/divergence.cu";
  if (run_tool(std::string(kNvcc) + " -ptx -arch=sm_90 -o " + dir + "/d.ptx " + src, &log) != 0)
    return "nvcc: " + log;
  runtime::PtxInstrumentOptions o;
  o.kernels = {{"_Z7divergePKiS0_Pii",
                std::string(GPUBT_PROBE_FUNCTION_PREFIX) + "0" + GPUBT_PROBE_DIRECT_SUFFIX,
                std::string(GPUBT_PROBE_FUNCTION_PREFIX) + "1" + GPUBT_PROBE_DIRECT_SUFFIX}};
  o.probe_ptx = c.spec.device.ptx;
  o.max_ptx_isa = 90;
  auto out = runtime::instrument_ptx(read_text(dir + "/d.ptx"), o);
  if (!out)
    return "instrument: " + out.error();
  std::ofstream(dir + "/out.ptx") << *out;
  int st = run_tool(
      std::string(kPtxasTool) + " -arch=sm_90 -o " + dir + "/out.cubin " + dir + "/out.ptx", &log);
  std::system(("rm -rf " + dir).c_str());
  return st == 0 ? "" : "ptxas: " + log;
}

TEST(PtxBlockPaste, BlockProbesAndActiveLanesAssembleInAKernel) {
  if (!have_cuda_tools())
    GTEST_SKIP() << "no nvcc/ptxas in /usr/local/cuda/bin";
  // block_begin at entry (probe 0), block_end at exit (probe 1).
  EXPECT_EQ(paste_and_assemble("gpu:block_begin:diverge { @b[sm] = count(); "
                               "@l = hist(popcount(active_lanes)); } "
                               "gpu:block_end:diverge { @e[bid_x, bid_y] = count(); }"),
            "");
  // block_begin alone: its hidden exit probe is probe 1.
  EXPECT_EQ(paste_and_assemble("gpu:block_begin:diverge { @b = count(); }"), "");
  // An entry probe reading active_lanes and an exit one (that stays at the exit: it reads it).
  EXPECT_EQ(paste_and_assemble("gpu:kprobe:diverge { @[popcount(active_lanes)] = count(); } "
                               "gpu:kretprobe:diverge { @x[popcount(active_lanes)] = count(); }"),
            "");
}

} // namespace
} // namespace gpubt::targets::testing
