// A kernel that reads a __device__ global the host writes with cudaMemcpyToSymbol (3 scales, one
// launch each) and counts its launches in another the host reads back: the checksum holds only
// if the kernels that run see the program's own globals. Usage: device_global [N=50000]
#include <cstdlib>
#include <vector>

#include "check.cuh"

__device__ float gScale;
__device__ unsigned long long gLaunches;

__global__ void scaleByGlobal(const float *x, float *y, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * gScale;
  if (i == 0)
    atomicAdd(&gLaunches, 1ull);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i)
    hx[i] = float(i % 1000) * 0.5f;
  float *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  const float scales[] = {3.0f, 5.0f, 0.25f};
  const int launches = 3, threads = 256, blocks = (n + threads - 1) / threads;
  uint64_t sum = kFnvBasis; // over every launch's y
  for (float s : scales) {
    CHECK(cudaMemcpyToSymbol(gScale, &s, sizeof s));
    scaleByGlobal<<<blocks, threads>>>(x, y, n);
    CHECK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
    sum = fnv1a(hy.data(), bytes, sum);
  }
  unsigned long long counted = 0;
  CHECK(cudaMemcpyFromSymbol(&counted, gLaunches, sizeof counted));
  sum = fnv1a(&counted, sizeof counted, sum);
  std::printf("threads %d launches %d device_launches %llu checksum %016llx\n", blocks * threads,
              launches, counted, (unsigned long long)sum);
  cudaFree(x);
  cudaFree(y);
  return counted == launches ? 0 : 1;
}
