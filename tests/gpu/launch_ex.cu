// Launches that bypass <<<>>> and cudaLaunchKernel (PyTorch uses cuLaunchKernelEx): exAdd through
// cudaLaunchKernelEx (with a launch attribute), cuLaunchKernelEx and cudaLaunchCooperativeKernel,
// once each over 4096 threads, then coopShift (a grid-wide sync) cooperatively once.
#include <cooperative_groups.h>

#include "check.cuh"

namespace cg = cooperative_groups;

__global__ void exAdd(float *c, const float *a, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] += a[i];
}

// Every thread writes, the whole grid waits, then each reads its neighbour's value.
__global__ void coopShift(const float *c, float *tmp, float *out, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    tmp[i] = c[i] * 2.0f;
  cg::this_grid().sync();
  if (i < n)
    out[i] = tmp[(i + 1) % n] + tmp[i];
}

int main() {
  const int n = 4096, threads = 256, blocks = n / threads;
  static float h[n];
  for (int i = 0; i < n; ++i)
    h[i] = float(i % 300) * 0.5f;
  int coop = 0;
  CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
  if (!coop) {
    std::fprintf(stderr, "device 0 has no cooperative launch\n");
    return 1;
  }
  float *a, *c, *tmp, *out;
  CHECK(cudaMalloc(&a, sizeof h));
  CHECK(cudaMalloc(&c, sizeof h));
  CHECK(cudaMalloc(&tmp, sizeof h));
  CHECK(cudaMalloc(&out, sizeof h));
  CHECK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(c, h, sizeof h, cudaMemcpyHostToDevice));
  int count = n;

  // 1. cudaLaunchKernelEx, with a priority attribute.
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributePriority;
  attr.val.priority = greatest;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.attrs = &attr;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, exAdd, c, (const float *)a, count));

  // 2. cuLaunchKernelEx on the runtime's handle for the same kernel.
  cudaFunction_t fn;
  CHECK(cudaGetFuncBySymbol(&fn, (const void *)exAdd));
  CUlaunchConfig cu_config = {};
  cu_config.gridDimX = blocks;
  cu_config.gridDimY = cu_config.gridDimZ = 1;
  cu_config.blockDimX = threads;
  cu_config.blockDimY = cu_config.blockDimZ = 1;
  void *add_args[] = {&c, &a, &count};
  CHECK_CU(cuLaunchKernelEx(&cu_config, (CUfunction)fn, add_args, nullptr));

  // 3. A cooperative launch of the same kernel, then one that needs it (grid sync).
  CHECK(cudaLaunchCooperativeKernel((void *)exAdd, dim3(blocks), dim3(threads), add_args));
  void *shift_args[] = {&c, &tmp, &out, &count};
  CHECK(cudaLaunchCooperativeKernel((void *)coopShift, dim3(blocks), dim3(threads), shift_args));
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  uint64_t sum = fnv1a(h, sizeof h); // over out's bytes
  std::printf("threads %d launches 3 checksum %016llx\n", n, (unsigned long long)sum);
  cudaFree(a);
  cudaFree(c);
  cudaFree(tmp);
  cudaFree(out);
  return 0;
}
