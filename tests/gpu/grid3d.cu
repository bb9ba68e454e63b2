// A 2-D grid of 3-D blocks: grid (4,3), block (8,4,2), 768 threads. Each thread writes a value
// made of its indices; the checksum of the output shows tracing changed nothing.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void grid3d(uint32_t *out) {
  uint32_t block = blockIdx.y * gridDim.x + blockIdx.x;
  uint32_t local = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  uint32_t tid = block * (blockDim.x * blockDim.y * blockDim.z) + local;
  out[tid] = tid * 2654435761u ^ (blockIdx.x << 24 | blockIdx.y << 16 | threadIdx.z << 8 |
                                  threadIdx.y << 4 | threadIdx.x);
}

int main() {
  const dim3 grid(4, 3), block(8, 4, 2);
  const int n = 4 * 3 * 8 * 4 * 2;
  uint32_t *d, h[n];
  if (cudaMalloc(&d, sizeof h) != cudaSuccess)
    return 1;
  grid3d<<<grid, block>>>(d);
  if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
    return 1;
  uint64_t sum = 1469598103934665603ull;
  for (int i = 0; i < n; ++i)
    sum = (sum ^ h[i]) * 1099511628211ull;
  std::printf("threads %d checksum %016llx\n", n, (unsigned long long)sum);
  return 0;
}
