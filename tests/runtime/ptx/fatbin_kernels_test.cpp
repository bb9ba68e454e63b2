// Which backend a fatbin's kernel could get on a GPU (the kernels themselves are checked against
// nvcc's own cubins and PTX in tests/runtime/gpu/list_gpu_probes_test.cpp).
#include "runtime/ptx/fatbin_kernels.h"

#include <gtest/gtest.h>

using namespace gpubt::runtime::ptx;

TEST(FatbinKernels, SassRunsOnTheSameMajorWithAnOlderOrEqualMinor) {
  EXPECT_TRUE(sass_runs_on(90, 90));
  EXPECT_TRUE(sass_runs_on(80, 86));
  EXPECT_FALSE(sass_runs_on(86, 80));
  EXPECT_FALSE(sass_runs_on(80, 90)); // another major: no
  EXPECT_FALSE(sass_runs_on(90, 100));
  EXPECT_TRUE(sass_runs_on(100, 103));
  EXPECT_FALSE(sass_runs_on(120, 100));
}

TEST(FatbinKernels, PtxWinsWhereTheDriverCanJitIt) {
  FatbinKernel k{"k", {80}, {90}};
  EXPECT_EQ(kernel_backend(k, 90), KernelBackend::Ptx);
  EXPECT_EQ(kernel_backend(k, 80), KernelBackend::Ptx);
  EXPECT_EQ(kernel_backend(k, 75), KernelBackend::None);
  FatbinKernel sass_only{"k", {}, {80, 90}};
  EXPECT_EQ(kernel_backend(sass_only, 90), KernelBackend::Sass);
  EXPECT_EQ(kernel_backend(sass_only, 89), KernelBackend::Sass);
  EXPECT_EQ(kernel_backend(sass_only, 75), KernelBackend::None);
  FatbinKernel newer_ptx{"k", {100}, {90}};
  EXPECT_EQ(kernel_backend(newer_ptx, 90), KernelBackend::Sass);
  EXPECT_STREQ(backend_name(KernelBackend::Ptx), "ptx");
  EXPECT_STREQ(backend_name(KernelBackend::Sass), "sass");
  EXPECT_STREQ(backend_name(KernelBackend::None), "none");
}

TEST(FatbinKernels, NotAFatbinIsAnError) {
  const uint8_t junk[32] = {1, 2, 3};
  auto r = fatbin_kernels(junk);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "fatbin: no container magic at offset 0");
}
