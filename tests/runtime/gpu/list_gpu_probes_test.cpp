// -l 'gpu:...' on programs and libraries the test build makes with nvcc (tests/programs/cuda:
// several -gencode sets), checked against what the toolkit and binutils say independently: the
// kernels of `nvcc -cubin` (readelf's defined FUNC symbols marked as entries, st_other 0x10) and
// of `nvcc -ptx` (its .entry lines), demangled by c++filt.
#include "runtime/gpu/list_gpu_probes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/nvcc_support.h"

namespace gpubt::runtime {
namespace {

using namespace testing;

// Built by tests/programs/cuda/CMakeLists.txt where nvcc is.
const std::string kFatbins = GPUBT_BINARY_DIR "/tests/programs/fatbins";

class ListGpuProbes : public ::testing::Test {
protected:
  static void SetUpTestSuite() { tmp_ = make_temp_dir(); }
  static void TearDownTestSuite() {
    if (!tmp_.empty())
      std::system(("rm -rf " + tmp_).c_str());
  }
  void SetUp() override {
    if (access((dir_ + "/app").c_str(), X_OK) != 0)
      GTEST_SKIP() << "no " << dir_ << ": nvcc was not found when the tests were built";
  }

  static std::string run_shell(const std::string &cmd) {
    std::string log;
    EXPECT_EQ(run_tool(cmd, &log), 0) << cmd << ": " << log;
    return log;
  }
  static std::vector<std::string> lines(const std::string &text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string l; std::getline(s, l);)
      if (!l.empty())
        out.push_back(l);
    return out;
  }
  // The kernels of the cubin, by readelf: defined FUNC symbols with st_other 0x10 (entries).
  static std::set<std::string> truth_cubin_kernels() {
    std::set<std::string> out;
    std::regex entry(R"(\sFUNC\s+\S+\s+\S+\s+\[<other>: 10\]\s+\d+\s+(\S+)$)");
    for (const auto &l : lines(run_shell("readelf -sW " + dir_ + "/truth.cubin 2>/dev/null"))) {
      std::smatch m;
      if (std::regex_search(l, m, entry))
        out.insert(m[1]);
    }
    return out;
  }
  static std::set<std::string> truth_ptx_kernels() {
    std::set<std::string> out;
    std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
    for (const auto &l : lines(read_text(dir_ + "/truth.ptx"))) {
      std::smatch m;
      if (std::regex_search(l, m, entry))
        out.insert(m[1]);
    }
    return out;
  }
  // A signature as -l prints it: in double quotes when a script needs them (blanks, `(`, `,`).
  static std::string as_listed(const std::string &sig) {
    return sig.find_first_of(" (),<>") == std::string::npos ? sig : "\"" + sig + "\"";
  }
  // The lines `gpu:TYPE:SIGNATURE` for the truth kernels (and EXTRA), sorted as -l prints them.
  static std::vector<std::string> truth_lines(const std::string &type,
                                              const std::vector<std::string> &extra = {}) {
    std::string mangled;
    for (const auto &k : truth_cubin_kernels())
      mangled += k + "\n";
    std::ofstream(tmp_ + "/names.txt") << mangled;
    std::set<std::string> sigs(extra.begin(), extra.end());
    for (const auto &d : lines(run_shell("c++filt < " + tmp_ + "/names.txt")))
      sigs.insert(d);
    std::vector<std::string> out;
    for (const auto &s : sigs)
      out.push_back("gpu:" + type + ":" + as_listed(s));
    return out;
  }

  static Result<std::string> list(const std::string &pattern, const std::string &arch = "",
                                  bool verbose = false, const std::string &command = "",
                                  int pid = -1) {
    std::ostringstream out;
    auto st = list_gpu_probes({pattern, command, pid, arch, verbose}, out);
    if (!st)
      return make_error(st.error());
    return out.str();
  }

  static inline const std::string dir_ = kFatbins;
  static inline std::string tmp_;
};

TEST_F(ListGpuProbes, TruthAgreesWithItself) {
  // The cubin and the PTX of one source name the same kernels: a guard on the truth itself.
  EXPECT_EQ(truth_cubin_kernels(), truth_ptx_kernels());
  EXPECT_EQ(truth_cubin_kernels().size(), 7u);
}

TEST_F(ListGpuProbes, EveryGencodeSetListsTheSameKernels) {
  auto want = truth_lines("kprobe");
  for (const char *file :
       {"sass90", "ptx80", "both", "rdc", "compressed", "uncompressed", "libkernels.so"}) {
    auto got = list("gpu:kprobe:" + dir_ + "/" + file + ":*");
    ASSERT_TRUE(got.ok()) << file << ": " << got.error();
    EXPECT_EQ(lines(*got), want) << file;
  }
}

TEST_F(ListGpuProbes, WildcardTypeListsEveryProbeType) {
  auto got = list("gpu:*:" + dir_ + "/sass90");
  ASSERT_TRUE(got.ok()) << got.error();
  auto want = truth_lines("kprobe");
  for (const char *type : {"kretprobe", "block_begin", "block_end", "hang", "mem", "load", "store",
                           "atomic", "barrier"}) {
    auto more = truth_lines(type);
    want.insert(want.end(), more.begin(), more.end());
  }
  EXPECT_EQ(lines(*got), want);
}

// A memory probe's SPACE (issue 28) stays in what is listed, and narrows the types to memory
// probes: gpu:*:shared:FILE lists gpu:mem:shared:K ... gpu:atomic:shared:K.
TEST_F(ListGpuProbes, MemoryProbesKeepTheirSpace) {
  auto got = list("gpu:load:global:" + dir_ + "/sass90:*");
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(lines(*got), truth_lines("load:global"));
  auto any = list("gpu:*:shared:" + dir_ + "/sass90:*");
  ASSERT_TRUE(any.ok()) << any.error();
  std::vector<std::string> want;
  for (const char *type : {"mem", "load", "store", "atomic"}) {
    auto more = truth_lines(std::string(type) + ":shared");
    want.insert(want.end(), more.begin(), more.end());
  }
  EXPECT_EQ(lines(*any), want);
}

TEST_F(ListGpuProbes, BackendPerArchitecture) {
  // Each kernel's backend: PTX at or below the GPU's arch is JIT-able; a cubin runs on the same
  // major version with a minor not newer.
  const std::map<std::pair<std::string, std::string>, std::string> want = {
      {{"sass90", "sm_90"}, "sass"}, {{"sass90", "sm_80"}, "none"}, {{"sass90", "sm_100"}, "none"},
      {{"ptx80", "sm_90"}, "ptx"},   {{"ptx80", "sm_80"}, "ptx"},   {{"ptx80", "sm_75"}, "none"},
      {{"both", "sm_90"}, "ptx"},    {{"both", "sm_86"}, "ptx"},    {{"both", "sm_75"}, "none"},
  };
  size_t kernels = truth_cubin_kernels().size();
  for (const auto &[key, backend] : want) {
    auto got = list("gpu:kretprobe:" + dir_ + "/" + key.first + ":*", key.second, true);
    ASSERT_TRUE(got.ok()) << got.error();
    auto ls = lines(*got);
    ASSERT_EQ(ls.size(), kernels + 2) << *got; // the architecture and file headers
    EXPECT_EQ(ls[0].rfind("# GPU architecture " + key.second + " (--gpu-arch)", 0), 0u) << ls[0];
    EXPECT_EQ(ls[1].rfind("# " + dir_ + "/" + key.first + ": ", 0), 0u) << ls[1];
    for (size_t i = 2; i < ls.size(); ++i)
      EXPECT_EQ(ls[i].substr(0, ls[i].find(' ')), backend)
          << key.first << " on " << key.second << ": " << ls[i];
  }
  auto both = list("gpu:kprobe:" + dir_ + "/both:vector_add", "sm_90", true);
  ASSERT_TRUE(both.ok());
  EXPECT_NE(both->find("# " + dir_ + "/both: SASS sm_90; PTX compute_80\n"), std::string::npos)
      << *both;
  EXPECT_NE(both->find("\nptx   gpu:kprobe:vector_add\n"), std::string::npos) << *both;
}

TEST_F(ListGpuProbes, PatternsMatchAsGpuProbesDo) {
  std::string f = dir_ + "/both:";
  auto scale = list("gpu:kprobe:" + f + "scale"); // the demangled base name
  ASSERT_TRUE(scale.ok());
  EXPECT_EQ(lines(*scale),
            (std::vector<std::string>{"gpu:kprobe:\"void scale<double, 2>(double*, double, int)\"",
                                      "gpu:kprobe:\"void scale<float, 1>(float*, float, int)\"",
                                      "gpu:kprobe:\"void scale<long, 4>(long*, long, int)\""}));
  auto mangled = list("gpu:kretprobe:" + f + "_Z5scaleIdLi2EEvPT_S0_i");
  ASSERT_TRUE(mangled.ok());
  EXPECT_EQ(*mangled, "gpu:kretprobe:\"void scale<double, 2>(double*, double, int)\"\n");
  auto sig = list("gpu:kprobe:" + f + "void scale<float, 1>(float*, float, int)");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(*sig, "gpu:kprobe:\"void scale<float, 1>(float*, float, int)\"\n");
  auto wild = list("gpu:k*probe:" + f + "*_ex?t*");
  ASSERT_TRUE(wild.ok());
  EXPECT_EQ(*wild, "gpu:kprobe:early_exits\ngpu:kprobe:trap_or_exit\n"
                   "gpu:kretprobe:early_exits\ngpu:kretprobe:trap_or_exit\n");
  auto none = list("gpu:kprobe:" + f + "gemm*");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
}

TEST_F(ListGpuProbes, CommandListsTheProgramAndItsLibraries) {
  auto got = list("gpu:kprobe:*_kernel", "", false, dir_ + "/app --wait");
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(*got, "gpu:kprobe:\"app_only_kernel(int*)\"\n");
  auto lib = list("gpu:kprobe:vector_add", "", true, dir_ + "/app");
  ASSERT_TRUE(lib.ok()) << lib.error();
  EXPECT_NE(lib->find("# " + dir_ + "/libkernels.so: SASS sm_90; PTX compute_90\n"),
            std::string::npos)
      << *lib;
}

TEST_F(ListGpuProbes, ProcessListsWhatItMaps) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl((dir_ + "/app").c_str(), "app", "wait", nullptr);
    _exit(127);
  }
  // Wait until the loader has mapped libkernels.so.
  std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  for (int i = 0; i < 200 && read_text(maps).find("libkernels.so") == std::string::npos; ++i)
    usleep(10000);
  auto got = list("gpu:kprobe:*", "", false, "", pid);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(lines(*got), truth_lines("kprobe", {"app_only_kernel(int*)"}));
}

TEST_F(ListGpuProbes, Errors) {
  auto err = [](Result<std::string> r) { return r.ok() ? "(listed) " + *r : r.error(); };
  EXPECT_EQ(err(list("gpu:kprobe:/nonexistent/app:*")),
            "cannot open '/nonexistent/app': No such file or directory");
  std::ofstream(tmp_ + "/text.so") << "not an ELF file\n";
  EXPECT_EQ(err(list("gpu:kprobe:" + tmp_ + "/text.so:*")),
            "'" + tmp_ + "/text.so' is not an ELF file");
  const std::string calls = GPUBT_BINARY_DIR "/tests/programs/calls";
  EXPECT_EQ(err(list("gpu:kprobe:" + calls + ":*")),
            "'" + calls + "' has no CUDA fatbin (no .nv_fatbin section): it holds no GPU kernels");
  EXPECT_EQ(err(list("gpu:*")).rfind("gpu: probes are listed from the fatbins of a program", 0),
            0u);
  EXPECT_EQ(err(list("gpu:uprobe:" + dir_ + "/both:*")),
            "'gpu:uprobe:" + dir_ +
                "/both:*': 'uprobe' is no gpu probe type (gpu:kprobe, "
                "gpu:kretprobe, gpu:block_begin, gpu:block_end, gpu:hang, gpu:mem, gpu:load, "
                "gpu:store, gpu:atomic, gpu:barrier)");
  EXPECT_EQ(
      err(list("gpu:*", "", false, calls)),
      "neither '" + calls +
          "' nor a library it links has a CUDA fatbin: no GPU kernels to "
          "list (libraries loaded with dlopen, as PyTorch's are, can be named in the pattern or "
          "listed with -p PID)");
  EXPECT_EQ(err(list("gpu:*", "", false, "", getpid())),
            "no file process " + std::to_string(getpid()) +
                " maps has a CUDA fatbin: no GPU kernels to list (a library it has not loaded "
                "yet can be named in the pattern)");
  EXPECT_EQ(err(list("gpu:*", "", false, "", 999999999)), "no process with pid 999999999");
  EXPECT_EQ(err(list("gpu:*", "", false, "'/nonexistent/my app' --flag")),
            "'/nonexistent/my app' does not exist or is not executable");
  EXPECT_EQ(err(list("gpu:*:" + dir_ + "/both", "compute_90")),
            "--gpu-arch takes an architecture such as sm_80 or sm_90, not 'compute_90'");
}

} // namespace
} // namespace gpubt::runtime
