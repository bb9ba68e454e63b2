// --timeline on the device: the launch's last thread sends a GpuLaunchRecord through the printf
// ring (the script's last_thread probe, else a hidden exit probe), gpu printfs carry a stamp,
// and every variant assembles with the real ptxas as a Compute Sanitizer patch.
#include <gtest/gtest.h>

#include "runtime/abi/device_abi.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

DeviceCompiled compile_with_timeline(const std::string &script,
                                     std::vector<std::string> *warnings = nullptr) {
  HostOptions host;
  host.bpf.timeline = true;
  codegen::device::DeviceCodegenOptions opts;
  opts.warnings = warnings;
  return compile_gpu_script(script, opts, host);
}

void expect_assembles(const DeviceCompiled &c) {
  ASSERT_EQ(c.error, "");
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(c.spec.device.ptx, &log), 0) << log << "\n" << c.spec.device.ptx;
}

// The record is built from these ctx fields: launch_start and the kernel's name, word by word.
void expect_sends_launch_record(const std::string &fn) {
  EXPECT_NE(fn.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_start)) + "]"),
            std::string::npos) << fn;
  for (uint32_t off = 0; off < GPUBT_KERNEL_NAME_SIZE; off += 8)
    EXPECT_NE(fn.find("+" + std::to_string(offsetof(gpubt_device_ctx, kernel_name) + off) + "]"),
              std::string::npos) << off << "\n" << fn;
  EXPECT_NE(fn.find("%globaltimer"), std::string::npos) << fn; // the end time
}

// tools/kerneltime.bt's shape (without its kernel key, which reads the name itself): its own
// last_thread probe sends the records; no probe is added but the entry probe launch_start
// needs, and the last thread still resets the state.
TEST(PtxTimeline, ScriptsLastThreadProbeSendsTheLaunchRecords) {
  const char *script =
      "gpu:kretprobe:* /last_thread/ { @us = hist((nsecs - launch_start) / 1000); }";
  auto c = compile_with_timeline(script);
  expect_assembles(c);
  const auto &d = c.spec.device;
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.probes[1].name, "gpu:kprobe:*");
  EXPECT_FALSE(d.launch_state);
  std::string exit = function_text(d.ptx, "gpubt_probe_0_direct");
  expect_sends_launch_record(exit);
  EXPECT_NE(exit.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_start)) + "], -1;"),
            std::string::npos) << exit;
  // Without --timeline the same probe reads no kernel name.
  auto plain = compile_gpu_script(script);
  std::string plain_exit = function_text(plain.spec.device.ptx, "gpubt_probe_0_direct");
  EXPECT_EQ(plain_exit.find("+" + std::to_string(offsetof(gpubt_device_ctx, kernel_name) + 56) +
                            "]"),
            std::string::npos)
      << plain_exit;
}

// A script that knows nothing of launches: a hidden exit probe counts the threads and sends the
// record, a hidden entry probe takes launch_start; gpu printfs end with their stamp.
TEST(PtxTimeline, HiddenProbesWhereTheScriptCountsNoThreads) {
  auto c = compile_with_timeline("gpu:kprobe:vectorAdd /tid == 0/ { printf(\"hi %d\\n\", bid_x); }");
  expect_assembles(c);
  const auto &d = c.spec.device;
  ASSERT_EQ(d.probes.size(), 3u);
  EXPECT_EQ(d.probes[1].name, "gpu:kretprobe:vectorAdd");
  EXPECT_EQ(d.probes[1].point.kind, abi::ProbePointKind::Exit);
  EXPECT_EQ(d.probes[2].name, "gpu:kprobe:vectorAdd");
  EXPECT_FALSE(d.launch_state); // the hidden exit probe resets it
  std::string end = function_text(d.ptx, "gpubt_probe_1_direct");
  expect_sends_launch_record(end);
  EXPECT_NE(end.find("atom.global.add.u64"), std::string::npos) << end;
  EXPECT_TRUE(c.spec.timeline);
  // The printf record: ring header 8 + event header 8 + one arg 8 + the stamp 24 = 48 bytes.
  std::string print = function_text(d.ptx, "gpubt_probe_0_direct");
  EXPECT_NE(print.find("%globaltimer"), std::string::npos) << print;
  EXPECT_NE(print.find(", 48;"), std::string::npos) << print;
}

// Where the agent resets the launch state (launch_start read without last_thread), the hidden
// exit probe leaves it alone: a script probe in the same last thread may still read it.
TEST(PtxTimeline, HiddenExitProbeLeavesTheAgentsResetAlone) {
  auto c = compile_with_timeline("gpu:kretprobe:k { @x = nsecs - launch_start; }");
  expect_assembles(c);
  const auto &d = c.spec.device;
  EXPECT_TRUE(d.launch_state);
  ASSERT_EQ(d.probes.size(), 3u);
  std::string end = function_text(d.ptx, "gpubt_probe_1_direct");
  expect_sends_launch_record(end);
  EXPECT_EQ(end.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_start)) + "], -1;"),
            std::string::npos) << end;
}

// Two kernel patterns may match one kernel, whose threads two counting probes would count
// twice: no launch spans then, and a warning says why.
TEST(PtxTimeline, TwoPatternsWithoutLastThreadWarn) {
  std::vector<std::string> warnings;
  auto c = compile_with_timeline("gpu:kprobe:a { @a = count(); } gpu:kprobe:b { @b = count(); }",
                                 &warnings);
  expect_assembles(c);
  EXPECT_EQ(c.spec.device.probes.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "--timeline: no GPU launch spans: the gpu probes name 2 kernel patterns; "
                         "launch spans need one pattern, or one gpu probe that uses last_thread");
}

} // namespace
} // namespace gpubt::targets::testing
