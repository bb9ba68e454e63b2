// The mission's program: C = A + B over N floats, LAUNCHES times, 256 threads a block.
// Usage: vectorAdd [N=50000] [LAUNCHES=1]. Prints the thread count, a checksum of C and the
// mean kernel time (cudaEvent), so traced and plain runs can be compared.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.cuh"

__global__ void vectorAdd(const float *a, const float *b, float *c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  int launches = argc > 2 ? std::atoi(argv[2]) : 1;
  size_t bytes = size_t(n) * sizeof(float);
  float *ha = (float *)std::malloc(bytes), *hb = (float *)std::malloc(bytes),
        *hc = (float *)std::malloc(bytes);
  for (int i = 0; i < n; ++i) {
    ha[i] = float(i % 1000) * 0.5f;
    hb[i] = float(i % 77) * 0.25f;
  }
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (n + threads - 1) / threads;
  vectorAdd<<<blocks, threads>>>(a, b, c, n); // warm-up: lazy loading and patching happen here
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int l = 1; l < launches; ++l)
    vectorAdd<<<blocks, threads>>>(a, b, c, n);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost));
  uint64_t sum = 1469598103934665603ull; // FNV-1a over C's bytes
  for (size_t i = 0; i < bytes; ++i)
    sum = (sum ^ ((unsigned char *)hc)[i]) * 1099511628211ull;
  std::printf("threads %d launches %d checksum %016llx\n", blocks * threads, launches,
              (unsigned long long)sum);
  if (launches > 1)
    std::printf("kernel_us %.3f\n", 1000.0 * ms / (launches - 1));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
