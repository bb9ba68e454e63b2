// Per-call cost of three CUDA runtime calls, for tracing-overhead comparisons: N launches of an
// empty kernel, N cudaMalloc+cudaFree pairs of 4 KiB, N 4-byte host->device cudaMemcpy.
// Prints "API_COST <call> <ns per call>" lines. usage: cuda_api_cost [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

template <class F> static double ns_per_call(int n, F f) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    f();
  cudaDeviceSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  int host = 42;
  int *dev = nullptr;
  if (cudaMalloc(&dev, sizeof(int)) != cudaSuccess) {
    fprintf(stderr, "no device\n");
    return 1;
  }
  empty_kernel<<<1, 32>>>(); // warm-up: module load, first-launch costs
  cudaDeviceSynchronize();
  printf("API_COST cudaLaunchKernel %.1f\n", ns_per_call(n, [] { empty_kernel<<<1, 32>>>(); }));
  printf("API_COST cudaMalloc+cudaFree %.1f\n", ns_per_call(n, [] {
           void *p;
           cudaMalloc(&p, 4096);
           cudaFree(p);
         }));
  printf("API_COST cudaMemcpy %.1f\n", ns_per_call(n, [&] {
           cudaMemcpy(dev, &host, sizeof(int), cudaMemcpyHostToDevice);
         }));
  cudaFree(dev);
  return 0;
}
