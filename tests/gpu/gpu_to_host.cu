// Known truth for maps the GPU writes and host probes read: gridKernel is launched with a
// different number of blocks each round; after each synchronization (cudaDeviceSynchronize,
// then cudaStreamSynchronize on the second half) the program calls report(BLOCKS), where a host
// uprobe can read what a gpu probe wrote in that launch. Usage: gpu_to_host. Prints a checksum.
#include "check.cuh"

__global__ void gridKernel(unsigned *out) {
  if (threadIdx.x == 0)
    atomicAdd(out, 1u);
}

// The host probe's point: called after each synchronization with the launch's block count.
extern "C" __attribute__((noinline, used)) void report(int blocks) { asm volatile("" ::"r"(blocks)); }

int main() {
  unsigned *d;
  CHECK(cudaMalloc(&d, sizeof(unsigned)));
  CHECK(cudaMemset(d, 0, sizeof(unsigned)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int blocks[] = {3, 7, 12, 5, 9, 2};
  for (int i = 0; i < 6; ++i) {
    gridKernel<<<blocks[i], 64, 0, i < 3 ? nullptr : s>>>(d);
    if (i < 3)
      CHECK(cudaDeviceSynchronize());
    else
      CHECK(cudaStreamSynchronize(s));
    report(blocks[i]);
  }
  unsigned h = 0;
  CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("blocks total %u checksum %016llx\n", h, (unsigned long long)fnv1a(&h, sizeof h));
  return 0;
}
