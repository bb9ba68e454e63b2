// gpu probes -> SPIR-V: every module the SPIR-V target emits passes the real spirv-val (Vulkan
// flavour: the library module, then linked into shaders by tests/vulkan; OpenCL flavour: as an
// OpenCL module), and the OpenCL flavour
// links with spirv-link into a kernel module clang-22 compiled from OpenCL C.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "runtime/abi/spirv_words.h"
#include "targets/spirv/spirv_target.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char dir[] = "/tmp/gpubt-spirv-XXXXXX";
    path = mkdtemp(dir) ? dir : "/tmp";
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
};

bool have(const char *tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs CMD; its exit status, its output in OUTPUT.
int sh(const std::string &cmd, std::string *output) {
  std::string log = "/tmp/gpubt-spirv-log." + std::to_string(getpid());
  int st = std::system((cmd + " > " + log + " 2>&1").c_str());
  std::ifstream l(log);
  output->assign(std::istreambuf_iterator<char>(l), {});
  std::remove(log.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const abi::DeviceCode *image_of(const abi::ProgramSpec &spec, abi::DeviceFormat f) {
  for (const auto &image : spec.device.images)
    if (image.format == f)
      return &image;
  return nullptr;
}

const char *const kScripts[] = {
    "gpu:kretprobe:main { @[tid] = count(); }",
    "gpu:kprobe:main { @ = count(); }",
    "gpu:kprobe:main { @s = sum(tid_x); @t[bid_x] = sum(tid); }",
    "gpu:kretprobe:k { @a[bid_x] = avg(tid); @st[bid_x] = stats(tid); }",
    "gpu:kretprobe:k { @mn[bid_x] = min(tid); @mx[bid_y] = max(tid); @m = min(tid); }",
    "gpu:kretprobe:k { @h = hist(tid); @hk[bid_x] = hist(tid); }",
    "gpu:kretprobe:k { @l[warp] = lhist(lane, 0, 32, 4); @l2 = lhist(tid, 0, 1000, 10); }",
    "gpu:kretprobe:k { @[bid_x, bid_y, tid_z] = count(); @s[lane, warp] = sum(1); }",
    "gpu:kretprobe:k / tid % 2 == 0 && lane < 16 / { @even = count(); }",
    "gpu:kretprobe:k { @x[tid] = tid * 2; }",
    "gpu:kretprobe:k { @x = @x + 1; @y += 2; @z++; }",
    // tools/kerneltime.bt: the launch's last thread (a count of exits, then its own branch)
    "gpu:kretprobe:k / last_thread / { @c = count(); }",
    // Nested ifs with printf and keyed maps under a predicate.
    "gpu:kretprobe:k / tid % 2 == 0 / { if (lane < 4) { @a[tid] = count(); } else { if (warp == "
    "1) { printf(\"x %d\\n\", tid); } else { @b[bid_x] = sum(tid); } } @m = max(tid); }",
    "gpu:kprobe:k { if (tid > 10) { if (tid < 100) { @x[tid % 7] = count(); } } @y[1] = "
    "count(); }",
    "gpu:kretprobe:k { if (lane < 4) { @a[tid % 5] = sum(tid); } else { @b[tid % 3] = max(tid); } }",
    // Block probes (a claim loop at entry, a count at exit) and the subgroup's ballot.
    "gpu:block_begin:k { @b[bid_x] = count(); } gpu:block_end:k { @e = count(); }",
    "gpu:block_end:k { @e[lane] = count(); } gpu:kretprobe:k { @[popcount(active_lanes)] = count(); }",
};
// Scripts that read the GPU clock, which the OpenCL flavour refuses.
const char *const kVulkanScripts[] = {
    "gpu:kretprobe:* / last_thread / { @us[kernel] = hist((nsecs - launch_start) / 1000); }",
    "gpu:kprobe:k { @s = min(nsecs); } gpu:kretprobe:k { if (last_thread) { @d = hist(nsecs - "
    "launch_start); } @c = count(); }",
};

class SpirvTarget : public ::testing::TestWithParam<const char *> {};

// SCRIPT's probes as FLAVOUR emits them, written to DIR/p.spv; the image through OUT.
void emit_script(SpirvFlavour flavour, const std::string &script, const TempDir &dir,
                 abi::DeviceCode &out) {
  auto target = make_spirv_target(flavour);
  ASSERT_TRUE(target) << "no SPIR-V back end";
  auto c = compile_device_script(script, *target);
  ASSERT_EQ(c.error, "");
  const abi::DeviceCode *image = image_of(c.spec, flavour == SpirvFlavour::Vulkan
                                                      ? abi::DeviceFormat::SpirvVulkan
                                                      : abi::DeviceFormat::SpirvOpenCL);
  ASSERT_TRUE(image);
  out = *image;
  std::ofstream(dir.path + "/p.spv", std::ios::binary) << image->bytes;
}

// SCRIPT's Vulkan flavour is a Shader module with physical storage buffers that spirv-val takes.
void expect_vulkan_valid(const char *script) {
  TempDir dir;
  abi::DeviceCode image;
  ASSERT_NO_FATAL_FAILURE(emit_script(SpirvFlavour::Vulkan, script, dir, image));
  spirv::Module m;
  ASSERT_TRUE(m.parse(reinterpret_cast<const uint32_t *>(image.bytes.data()),
                      image.bytes.size() / 4));
  EXPECT_TRUE(m.has_capability(spirv::CapShader));
  EXPECT_TRUE(m.has_capability(spirv::CapPhysicalStorageBufferAddresses));
  EXPECT_FALSE(m.has_capability(6)); // Kernel
  if (!have("spirv-val"))
    GTEST_SKIP() << "no spirv-val";
  std::string out;
  // A library (Linkage), which Vulkan rules refuse: the modules the layer links it into are
  // checked as Vulkan 1.2 modules by tests/vulkan/run_vulkan.py.
  EXPECT_EQ(sh("spirv-val " + dir.path + "/p.spv", &out), 0) << out;
}

TEST_P(SpirvTarget, VulkanFlavourValidates) { expect_vulkan_valid(GetParam()); }

class SpirvVulkanOnly : public ::testing::TestWithParam<const char *> {};
TEST_P(SpirvVulkanOnly, VulkanFlavourValidates) { expect_vulkan_valid(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Scripts, SpirvVulkanOnly, ::testing::ValuesIn(kVulkanScripts));

TEST_P(SpirvTarget, OpenClFlavourValidates) {
  TempDir dir;
  abi::DeviceCode image;
  ASSERT_NO_FATAL_FAILURE(emit_script(SpirvFlavour::OpenCL, GetParam(), dir, image));
  if (!have("spirv-val"))
    GTEST_SKIP() << "no spirv-val";
  std::string out;
  EXPECT_EQ(sh("spirv-val " + dir.path + "/p.spv", &out), 0) << out;
}

INSTANTIATE_TEST_SUITE_P(Scripts, SpirvTarget, ::testing::ValuesIn(kScripts));

// Aggregations are combined per subgroup before their atomic, as per warp on CUDA: the probe
// takes a ballot of its subgroup, and a keyed one shuffles to compare keys.
TEST(SpirvTarget, AggregatesPerSubgroup) {
  for (const char *script : {"gpu:kretprobe:main { @ = count(); }",
                             "gpu:kretprobe:main { @[bid_x] = sum(tid); }"}) {
    TempDir dir;
    abi::DeviceCode image;
    ASSERT_NO_FATAL_FAILURE(emit_script(SpirvFlavour::Vulkan, script, dir, image));
    spirv::Module m;
    ASSERT_TRUE(m.parse(reinterpret_cast<const uint32_t *>(image.bytes.data()),
                        image.bytes.size() / 4));
    EXPECT_TRUE(m.has_capability(spirv::CapGroupNonUniformBallot)) << script;
    EXPECT_EQ(m.has_capability(spirv::CapGroupNonUniformShuffle),
              std::string(script).find("bid_x") != std::string::npos)
        << script;
  }
}

// last_thread and launch_start keep per-launch state in the entry point's context: the features
// tell the layer to order the dispatches of pipelines with such probes (overlapping dispatches,
// which NVIDIA's driver runs where no barrier separates them, would mix their counts); kerneltime
// and --timeline's hidden probes among them.
TEST(SpirvVulkan, LaunchStateIsAFeature) {
  auto target = make_spirv_target(SpirvFlavour::Vulkan);
  ASSERT_TRUE(target);
  for (auto [script, state] :
       {std::pair{"gpu:kretprobe:main { @ = count(); }", false},
        std::pair{"gpu:kretprobe:main /last_thread/ { @ = count(); }", true},
        std::pair{"gpu:kretprobe:main { @ = max(nsecs - launch_start); }", true}}) {
    auto c = compile_device_script(script, *target);
    ASSERT_EQ(c.error, "") << script;
    EXPECT_EQ(bool(c.spec.device.features & abi::DeviceLaunchState), state) << script;
  }
}

// last_thread's count is the one acquire-release atomic add (the last thread then sees every
// warp's launch_start); map updates stay relaxed.
TEST(SpirvVulkan, LastThreadCountIsAcquireRelease) {
  auto target = make_spirv_target(SpirvFlavour::Vulkan);
  ASSERT_TRUE(target);
  auto c = compile_device_script(
      "gpu:kretprobe:main /last_thread/ { @c = count(); @d = max(nsecs - launch_start); }",
      *target);
  ASSERT_EQ(c.error, "");
  const abi::DeviceCode *image = image_of(c.spec, abi::DeviceFormat::SpirvVulkan);
  ASSERT_TRUE(image);
  spirv::Module m;
  ASSERT_TRUE(m.parse(reinterpret_cast<const uint32_t *>(image->bytes.data()),
                      image->bytes.size() / 4));
  std::map<uint32_t, uint32_t> constants; // id -> value
  std::map<uint32_t, int> adds;           // semantics -> OpAtomicIAdd
  for (const auto &in : m.insts) {
    if (in.op == spirv::OpConstant && in.w.size() == 3)
      constants[in.w[1]] = in.w[2];
    if (in.op == 234) // OpAtomicIAdd: type, result, pointer, scope, semantics, value
      ++adds[constants[in.w[4]]];
  }
  EXPECT_EQ(adds[spirv::SemanticsAcqRel | spirv::SemanticsUniformMemory], 1);
  EXPECT_GE(adds[0], 1);
}

// nsecs reads the Device-scope shader clock and clock the Subgroup-scope one (OpReadClockKHR,
// which LLVM's Vulkan flavour does not emit: the flavour rewrite does), and the program's
// features tell the layer which the device must have; the OpenCL flavour refuses both.
TEST(SpirvVulkan, ClocksAreShaderClockReads) {
  TempDir dir;
  auto target = make_spirv_target(SpirvFlavour::Vulkan);
  ASSERT_TRUE(target);
  auto c = compile_device_script(
      "gpu:kprobe:main { @s = min(nsecs); } gpu:kretprobe:main { @d = max(nsecs - launch_start); "
      "@c = min(clock); }",
      *target);
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(c.spec.device.features,
            abi::DeviceReadsClock | abi::DeviceReadsCycles | abi::DeviceLaunchState);
  const abi::DeviceCode *image = image_of(c.spec, abi::DeviceFormat::SpirvVulkan);
  ASSERT_TRUE(image);
  spirv::Module m;
  ASSERT_TRUE(m.parse(reinterpret_cast<const uint32_t *>(image->bytes.data()),
                      image->bytes.size() / 4));
  EXPECT_TRUE(m.has_capability(spirv::CapShaderClockKHR));
  std::map<uint32_t, uint32_t> constants; // id -> value
  std::set<uint32_t> scopes;
  for (const auto &in : m.insts) {
    if (in.op == spirv::OpConstant && in.w.size() == 3)
      constants[in.w[1]] = in.w[2];
    if (in.op == spirv::OpReadClockKHR)
      scopes.insert(constants[in.w[2]]);
    if (in.op == spirv::OpName)
      EXPECT_EQ(spirv::string_at(in, 1).find("gpubt_spv_clock"), std::string::npos);
  }
  EXPECT_EQ(scopes, (std::set<uint32_t>{spirv::ScopeDevice, spirv::ScopeSubgroup}));
  std::ofstream(dir.path + "/p.spv", std::ios::binary) << image->bytes;
  if (!have("spirv-val"))
    GTEST_SKIP() << "no spirv-val";
  std::string out;
  EXPECT_EQ(sh("spirv-val " + dir.path + "/p.spv", &out), 0) << out;
}

TEST(SpirvOpenCl, RefusesClocks) {
  auto target = make_spirv_target(SpirvFlavour::OpenCL);
  ASSERT_TRUE(target);
  EXPECT_EQ(compile_device_script("gpu:kretprobe:k { @ = max(nsecs); }", *target).error,
            "gpu:kretprobe:k: nsecs cannot be read in SPIR-V kernels for OpenCL / Level Zero");
  EXPECT_EQ(compile_device_script("gpu:kretprobe:k { @ = max(clock); }", *target).error,
            "gpu:kretprobe:k: clock cannot be read in SPIR-V kernels for OpenCL / Level Zero");
}

// The Vulkan layer inserts no memory-access or barrier probe: the lowering refuses them, naming
// the backends that run them (compile.cpp then leaves Vulkan shaders untraced, said under -v).
TEST(SpirvVulkan, RefusesMemoryAndBarrierProbes) {
  auto target = make_spirv_target(SpirvFlavour::Vulkan);
  ASSERT_TRUE(target);
  EXPECT_EQ(compile_device_script("gpu:load:global:k { @ = count(); }", *target).error,
            "gpu:load:global:k: spirv-vulkan probes cannot run at memory (CUDA kernels can: the "
            "ptx and sass backends)");
  // bank_conflicts, like sectors, lives in those probes only.
  EXPECT_EQ(compile_device_script("gpu:mem:shared:k { @ = hist(bank_conflicts); }", *target).error,
            "gpu:mem:shared:k: spirv-vulkan probes cannot run at memory (CUDA kernels can: the "
            "ptx and sass backends)");
  EXPECT_EQ(compile_device_script("gpu:barrier:k { @ = count(); }", *target).error,
            "gpu:barrier:k: spirv-vulkan probes cannot run at barrier (CUDA kernels can: the "
            "ptx and sass backends)");
}

// An OpenCL C kernel calling probe 0 as device_abi.h says, compiled by clang-22 to SPIR-V, linked
// with the probes by spirv-link: the linked module validates. (No OpenCL or Level Zero runtime
// here executes SPIR-V.)
TEST(SpirvOpenCl, LinksIntoAnOpenClKernel) {
  TempDir dir;
  abi::DeviceCode image;
  ASSERT_NO_FATAL_FAILURE(emit_script(
      SpirvFlavour::OpenCL, "gpu:kretprobe:vector_add { @[tid] = count(); }", dir, image));
  if (!have("clang-22") || !have("spirv-link") || !have("spirv-val"))
    GTEST_SKIP() << "needs clang-22, spirv-link and spirv-val";
  std::ofstream(dir.path + "/k.cl") << R"(
uint gpubt_probe_0_direct(ulong ctx, ulong pc, uint wx, uint wy, uint wz, uint lx, uint ly,
                          uint lz, uint sx, uint sy, uint sz, uint nx, uint ny, uint nz, uint sub,
                          uint lane);
kernel void vector_add(global const float *a, global const float *b, global float *c, ulong ctx) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
  gpubt_probe_0_direct(ctx, 0, get_group_id(0), get_group_id(1), get_group_id(2), get_local_id(0),
                       get_local_id(1), get_local_id(2), get_local_size(0), get_local_size(1),
                       get_local_size(2), get_num_groups(0), get_num_groups(1), get_num_groups(2),
                       get_max_sub_group_size(), get_sub_group_local_id());
}
)";
  std::string out;
  ASSERT_EQ(sh("clang-22 --target=spirv64 -cl-std=CL2.0 -c " + dir.path + "/k.cl -o " + dir.path +
                   "/k.spv",
               &out),
            0)
      << out;
  // The kernel's builtins are imports LLVM leaves for the OpenCL runtime to resolve.
  ASSERT_EQ(sh("spirv-link --allow-partial-linkage " + dir.path + "/k.spv " + dir.path +
                   "/p.spv -o " + dir.path + "/linked.spv",
               &out),
            0)
      << out;
  EXPECT_EQ(sh("spirv-val " + dir.path + "/linked.spv", &out), 0) << out;
  EXPECT_EQ(sh("spirv-dis " + dir.path + "/linked.spv | grep -c 'OpFunctionCall.*gpubt_probe_0'",
               &out),
            0)
      << out;
}

} // namespace
} // namespace gpubt::targets::testing
