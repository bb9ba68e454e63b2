// Known truth for kernelretsnoop: lane 31 of every warp busy-waits SPIN_US (on %globaltimer)
// after the other lanes of its warp have exited. Usage: late_lane [BLOCKS=8] [THREADS=256]
// [SPIN_US=20] [LAUNCHES=1]. Prints the shape, a checksum of the output and the spin.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.cuh"

__global__ void lateLane(unsigned *out, uint64_t spin_ns) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i * 2654435761u;
  // The early lanes leave through their own exit: a plain `return` lets the compiler put one
  // reconvergence point before a shared EXIT, and every lane would then leave with lane 31.
  if ((threadIdx.x & 31) != 31)
    asm volatile("exit;");
  uint64_t until = globaltimer() + spin_ns;
  unsigned spins = 0;
  while (globaltimer() < until)
    ++spins;
  out[i] ^= spins != 0; // keeps the loop
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? std::atoi(argv[1]) : 8;
  int threads = argc > 2 ? std::atoi(argv[2]) : 256;
  int spin_us = argc > 3 ? std::atoi(argv[3]) : 20;
  int launches = argc > 4 ? std::atoi(argv[4]) : 1;
  size_t n = size_t(blocks) * threads;
  unsigned *d;
  CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
  for (int l = 0; l < launches; ++l)
    lateLane<<<blocks, threads>>>(d, uint64_t(spin_us) * 1000);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned *h = (unsigned *)std::malloc(n * sizeof(unsigned));
  CHECK(cudaMemcpy(h, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i)
    h[i] >>= 1; // the low bit only says whether lane 31 spun
  uint64_t sum = fnv1a(h, n * sizeof(unsigned));
  std::printf("blocks %d threads %d warps %zu spin_us %d launches %d checksum %016llx\n", blocks,
              threads, (n + 31) / 32, spin_us, launches, (unsigned long long)sum);
  cudaFree(d);
  std::free(h);
  return 0;
}
