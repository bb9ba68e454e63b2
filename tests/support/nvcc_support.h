// Test support: runs CUDA's nvcc / ptxas (skipped where absent) in a private temporary folder.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace gpubt::runtime::testing {

constexpr const char *kNvcc = "/usr/local/cuda/bin/nvcc";
constexpr const char *kPtxasTool = "/usr/local/cuda/bin/ptxas";
inline const std::string kPtxSources = GPUBT_SOURCE_DIR "/tests/programs/ptx/";

inline bool have_cuda_tools() { return access(kNvcc, X_OK) == 0 && access(kPtxasTool, X_OK) == 0; }

inline std::string make_temp_dir() {
  char dir[] = "/tmp/gpubt-nvcc-XXXXXX";
  return mkdtemp(dir) ? dir : "";
}

// Runs CMD with stdout and stderr into *LOG; returns its exit status.
inline int run_tool(const std::string &cmd, std::string *log) {
  std::string out = make_temp_dir();
  int st = std::system((cmd + " > " + out + "/log 2>&1").c_str());
  std::ifstream l(out + "/log");
  log->assign(std::istreambuf_iterator<char>(l), {});
  std::system(("rm -rf " + out).c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

inline std::string read_text(const std::string &path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), {}};
}

// A test suite whose files nvcc builds once, into dir_, by SUITE::build(dir, errors) (which
// appends each failed build's log to errors); each test skips without the toolkit and fails on
// a build error.
template <class Suite> class NvccSuite : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (!have_cuda_tools())
      return;
    dir_ = make_temp_dir();
    Suite::build(dir_, errors_);
  }
  static void TearDownTestSuite() {
    if (!dir_.empty())
      std::system(("rm -rf " + dir_).c_str());
  }
  void SetUp() override {
    if (!have_cuda_tools())
      GTEST_SKIP() << "no nvcc/ptxas in /usr/local/cuda/bin";
    ASSERT_EQ(errors_, "");
  }
  static inline std::string dir_, errors_;
};

} // namespace gpubt::runtime::testing
