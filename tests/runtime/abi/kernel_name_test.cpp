#include "runtime/abi/kernel_name.h"

#include <gtest/gtest.h>

#include "runtime/abi/device_abi.h"

using gpubt::abi::device_kernel_name;

TEST(KernelName, ShortNamesStay) {
  std::string n63(63, 'k');
  EXPECT_EQ(device_kernel_name("vectorAdd"), "vectorAdd");
  EXPECT_EQ(device_kernel_name(n63), n63);
}

// cuBLAS's names: equal for their first 63 characters, one key each.
TEST(KernelName, LongNamesThatDifferAfterTheCutStayApart) {
  std::string a = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
                  "execute_segment_k_off_kernel__5x_cublas";
  std::string b = a;
  b.back() = 'S';
  std::string sa = device_kernel_name(a), sb = device_kernel_name(b);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(sa.size(), GPUBT_KERNEL_NAME_SIZE - 1);
  EXPECT_EQ(sa.substr(0, 50), a.substr(0, 50));
  EXPECT_EQ(sa[50], '~');
  EXPECT_EQ(device_kernel_name(a), sa); // the same in every process and device
  EXPECT_EQ(device_kernel_name(std::string(64, 'k')).size(), 63u);
}
