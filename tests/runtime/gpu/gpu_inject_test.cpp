// The host side of gpu probes without a GPU: probe PTX assembled by the real ptxas into the run's
// folder with the agent config, and the agent's results file (two CUDA contexts) read back into
// merged MapData.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/device_abi.h"
#include "runtime/gpu/gpu_inject.h"

using namespace gpubt;

namespace {

const char *kEmptyPatch = R"(.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 func_retval0) gpubt_probe_0(.param .b64 p0, .param .b64 p1)
{
	.reg .b32 %r<2>;
	mov.u32 %r1, 0;
	st.param.b32 [func_retval0], %r1;
	ret;
}
)";

std::string ptxas() {
  for (const char *p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (access(p, X_OK) == 0)
      return p;
  return "";
}

gpubt::abi::ProgramSpec count_by_key_spec() {
  gpubt::abi::ProgramSpec spec;
  gpubt::abi::MapSpec m;
  m.name = "@";
  m.agg = gpubt::abi::AggKind::Count;
  m.key = {gpubt::abi::ValueType::Int, 8};
  m.value = {gpubt::abi::ValueType::Int, 8};
  m.key_size = 8;
  m.value_size = 8;
  spec.maps = {m};
  gpubt::abi::DeviceMapSpec d;
  d.map_index = 0;
  d.capacity = 4;
  d.key_size = 8;
  d.value_size = 8;
  d.entry_size = 24;
  spec.device.maps = {d};
  spec.device.probes = {{"gpu:kretprobe:k",
                         "k",
                         {gpubt::abi::ProbePointKind::Exit},
                         "gpubt_probe_0",
                         "gpubt_probe_0"}};
  spec.device.ptx = kEmptyPatch;
  spec.device.arch = "sm_90";
  return spec;
}

// A device map image: header, then (key, count) in the first slots.
std::vector<uint8_t> image(const std::vector<std::pair<uint64_t, uint64_t>> &rows, uint64_t drops) {
  std::vector<uint64_t> words(4 + 4 * 3);
  gpubt_device_map_header h{4, 8, 8, 24, drops, 0};
  std::memcpy(words.data(), &h, sizeof h);
  for (size_t i = 0; i < rows.size(); ++i) {
    words[4 + 3 * i] = GPUBT_SLOT_READY;
    words[5 + 3 * i] = rows[i].first;
    words[6 + 3 * i] = rows[i].second;
  }
  auto *p = reinterpret_cast<uint8_t *>(words.data());
  return {p, p + words.size() * 8};
}

// A path of this test process's own: ctest -j runs each test in a process of its own, and one
// that removes a shared file at its end took it from under another (CI: "no file").
const std::string &fake_agent() {
  static const std::string path = "/tmp/gpubt-test-agent-" + std::to_string(getpid()) + ".so";
  return path;
}

struct Env {
  Env() {
    std::ofstream(fake_agent()) << "";
    setenv("GPUBT_AGENT_PATH", fake_agent().c_str(), 1);
    setenv("GPUBT_GPU_ARCH", "sm_90,sm_80", 1);
    if (!ptxas().empty())
      setenv("GPUBT_PTXAS", ptxas().c_str(), 1);
  }
  ~Env() {
    unsetenv("GPUBT_AGENT_PATH");
    unsetenv("GPUBT_GPU_ARCH");
    unsetenv("GPUBT_PTXAS");
    unlink(fake_agent().c_str());
  }
};

// The agent config prepare_gpu_run writes for SPEC.
gpubt::Result<gpubt::abi::AgentConfig> written_config(const gpubt::abi::ProgramSpec &spec) {
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  if (!run)
    return gpubt::Error{run.error()};
  std::ifstream in(run->config_path);
  std::stringstream text;
  text << in.rdbuf();
  return gpubt::abi::parse_agent_config(text.str());
}

} // namespace

TEST(GpuInject, AssemblesProbesAndWritesConfig) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  std::string dir;
  {
    auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
    ASSERT_TRUE(run) << run.error();
    dir = run->dir;
    std::ifstream in(run->config_path);
    std::stringstream text;
    text << in.rdbuf();
    auto config = gpubt::abi::parse_agent_config(text.str());
    ASSERT_TRUE(config) << config.error();
    ASSERT_EQ(config->cubins.size(), 2u);
    for (const auto &c : config->cubins) {
      struct stat st;
      EXPECT_EQ(stat(c.path.c_str(), &st), 0) << c.path;
      EXPECT_GT(st.st_size, 0);
      EXPECT_EQ(stat(c.ptx.c_str(), &st), 0) << "the PTX backend's probe PTX: " << c.ptx;
    }
    EXPECT_EQ(config->backend, gpubt::abi::GpuBackend::Auto);
    EXPECT_FALSE(config->reads_clock()) << "no probe reads nsecs: the agent need not measure the clock";
    EXPECT_EQ(config->device.probes.size(), 1u);
    EXPECT_EQ(config->device.maps.size(), 1u);
    EXPECT_EQ(config->results_path, run->results_path);
    ASSERT_EQ(run->env.size(), 2u);
    EXPECT_EQ(run->env[0].first, "CUDA_INJECTION64_PATH");
    EXPECT_EQ(run->env[0].second, fake_agent());
  }
  EXPECT_NE(access(dir.c_str(), F_OK), 0) << "the run's folder is removed";
}

// Probes that read the GPU clock (nsecs, launch_start: codegen says so in the spec's features)
// turn the agent's clock measurement on; others leave it off.
TEST(GpuInject, ProbesReadingTheClockAskForItsMeasurement) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  for (bool reads : {false, true}) {
    auto spec = count_by_key_spec();
    spec.device.features = reads ? gpubt::abi::DeviceReadsClock : 0;
    auto config = written_config(spec);
    ASSERT_TRUE(config) << config.error();
    EXPECT_EQ(config->reads_clock(), reads);
  }
}

// The agent drains the device ring after each traced launch (a copy that waits for the launch)
// only when probes write records: a host printf's format (a BEGIN banner) is no reason to. It
// was: with tools/gpustuck.bt's banner a kernel waiting on its host thread hung (H200).
TEST(GpuInject, OnlyDeviceRecordsAskForTheRingAfterEachLaunch) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  for (bool records : {false, true}) {
    auto spec = count_by_key_spec();
    spec.formats.push_back({}); // a host printf's
    spec.device.features = records ? gpubt::abi::DeviceRecords : 0;
    auto config = written_config(spec);
    ASSERT_TRUE(config) << config.error();
    EXPECT_EQ(config->events_fd >= 0, records);
  }
}

TEST(GpuInject, PtxasErrorIsReported) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  spec.device.ptx = "this is not PTX";
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().find("assembling the gpu probes for sm_90"), std::string::npos)
      << run.error();
}

TEST(GpuInject, NoAgentIsAUserError) {
  setenv("GPUBT_AGENT_PATH", "/nonexistent/libgpubt_agent.so", 1);
  auto run = runtime::prepare_gpu_run(count_by_key_spec(), gpubt::abi::GpuBackend::Auto, false);
  unsetenv("GPUBT_AGENT_PATH");
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().find("GPUBT_AGENT_PATH"), std::string::npos);
}

// A probe at a point the injector does not insert at is refused before anything is assembled,
// never left out silently (no lowering makes one yet: the agent would refuse it at launch).
TEST(GpuInject, AProbePointTheInjectorLacksIsAnError) {
  Env env;
  auto spec = count_by_key_spec();
  spec.device.probes[0].point = {gpubt::abi::ProbePointKind::Launch};
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error(), "gpu:kretprobe:k: CUDA kernels have no launch probe point");
}

TEST(GpuResults, ContextsMergeAndDropsWarn) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_TRUE(run) << run.error();
  EXPECT_FALSE(runtime::collect_gpu_results(spec, *run)) << "no results file yet";
  gpubt::abi::AgentResults r;
  gpubt::abi::DeviceImage a, b;
  a.device = 0;
  a.probe_launches = {1};
  a.maps = {image({{5, 2}, {7, 1}}, 0)};
  b.device = 1;
  b.maps = {image({{5, 3}}, 4)};
  b.ring_drops = 2;
  // Two processes (RESULTS.PID each): one context in the first, two in the second.
  r.images = {a};
  std::ofstream(run->results_path + ".100", std::ios::binary) << gpubt::abi::write_agent_results(r);
  r.images = {b, b};
  std::ofstream(run->results_path + ".200", std::ios::binary) << gpubt::abi::write_agent_results(r);
  auto out = runtime::collect_gpu_results(spec, *run);
  ASSERT_TRUE(out) << out.error();
  ASSERT_EQ(out->maps.size(), 1u);
  std::map<uint64_t, uint64_t> sums;
  for (const auto &e : out->maps[0]) {
    uint64_t k;
    std::memcpy(&k, e.key.data(), 8);
    for (const auto &v : e.values) {
      uint64_t x;
      std::memcpy(&x, v.data(), 8);
      sums[k] += x;
    }
  }
  EXPECT_EQ(sums, (std::map<uint64_t, uint64_t>{{5, 8}, {7, 1}}));
  EXPECT_EQ(out->ring_drops, 4u);
  ASSERT_EQ(out->warnings.size(), 1u);
  EXPECT_NE(out->warnings[0].find("Lost 8"), std::string::npos) << out->warnings[0];
}

// What gpubt collects when the agent wrote one context's image with map IMAGE and one launch.
Result<runtime::GpuOutcome> collect_one(const gpubt::abi::ProgramSpec &spec,
                                        const runtime::GpuRun &run, std::vector<uint8_t> image) {
  gpubt::abi::AgentResults r;
  gpubt::abi::DeviceImage a;
  a.probe_launches = {1};
  a.maps = {std::move(image)};
  r.images = {a};
  std::ofstream(run.results_path + ".1", std::ios::binary) << gpubt::abi::write_agent_results(r);
  return runtime::collect_gpu_results(spec, run);
}

// A from_host map's device table is the host's copy (the agent fills it from the BPF map): its
// images give no rows and no warnings; the host map prints.
TEST(GpuResults, FromHostMapsAreNotReadBack) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  spec.maps[0].agg = gpubt::abi::AggKind::None;
  spec.device.maps[0].from_host = true;
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_TRUE(run) << run.error();
  auto out = collect_one(spec, *run, image({{5, 2}}, 3));
  ASSERT_TRUE(out) << out.error();
  ASSERT_EQ(out->maps.size(), 1u);
  EXPECT_TRUE(out->maps[0].empty());
  EXPECT_TRUE(out->warnings.empty());
}

// A to_host map's device table was copied into the BPF map by the agent: its images give no rows
// (the BPF map prints) and no warning, unless the full table dropped GPU writes.
TEST(GpuResults, ToHostMapsGiveOnlyTheirDrops) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  spec.maps[0].agg = gpubt::abi::AggKind::None;
  spec.device.maps[0].to_host = true;
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_TRUE(run) << run.error();
  auto collect = [&](uint64_t drops) { return collect_one(spec, *run, image({{5, 2}}, drops)); };
  auto quiet = collect(0);
  ASSERT_TRUE(quiet) << quiet.error();
  ASSERT_EQ(quiet->maps.size(), 1u);
  EXPECT_TRUE(quiet->maps[0].empty());
  EXPECT_TRUE(quiet->warnings.empty());
  auto lossy = collect(3);
  ASSERT_TRUE(lossy) << lossy.error();
  EXPECT_TRUE(lossy->maps[0].empty());
  ASSERT_EQ(lossy->warnings.size(), 1u);
  EXPECT_EQ(lossy->warnings[0].rfind("Lost 3 updates to ", 0), 0u) << lossy->warnings[0];
}

TEST(GpuResults, NoLaunchMatchedIsSaidAsUnmatched) {
  if (ptxas().empty())
    GTEST_SKIP() << "no ptxas";
  Env env;
  auto spec = count_by_key_spec();
  auto run = runtime::prepare_gpu_run(spec, gpubt::abi::GpuBackend::Auto, false);
  ASSERT_TRUE(run) << run.error();
  gpubt::abi::AgentResults r;
  gpubt::abi::DeviceImage a;
  a.probe_launches = {0};
  a.maps = {image({}, 0)};
  r.images = {a};
  std::ofstream(run->results_path + ".1", std::ios::binary) << gpubt::abi::write_agent_results(r);
  auto out = runtime::collect_gpu_results(spec, *run);
  ASSERT_TRUE(out) << out.error();
  EXPECT_TRUE(out->warnings.empty());
  EXPECT_EQ(out->unmatched, std::vector<size_t>{0}) << "the driver words it, with kernels' names";
}
