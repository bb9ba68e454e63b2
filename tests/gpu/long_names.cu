// Two kernels whose names (as cuBLAS's do) agree on their first 80 characters: `kernel` must keep
// them apart (issue 23). Launches the first 3 times and the second 5 times, 64 threads each.
#include <cstdio>
#include <cuda_runtime.h>

#define SAME_START sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute
#define CAT(a, b) a##b
#define NAME(a, b) CAT(a, b)

extern "C" __global__ void NAME(SAME_START, _segment_k_off_kernel_A)(int *out) { out[threadIdx.x] += 1; }
extern "C" __global__ void NAME(SAME_START, _segment_k_off_kernel_B)(int *out) { out[threadIdx.x] += 2; }

int main() {
  int *d, h[64];
  if (cudaMalloc(&d, sizeof h) != cudaSuccess || cudaMemset(d, 0, sizeof h) != cudaSuccess)
    return 1;
  for (int i = 0; i < 3; ++i)
    NAME(SAME_START, _segment_k_off_kernel_A)<<<1, 64>>>(d);
  for (int i = 0; i < 5; ++i)
    NAME(SAME_START, _segment_k_off_kernel_B)<<<1, 64>>>(d);
  if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
    return 1;
  std::printf("sum %d\n", h[0] + h[63]); // 2 * (3 + 10)
  return h[0] == 13 ? 0 : 1;
}
