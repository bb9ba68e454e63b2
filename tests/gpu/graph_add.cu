// vectorAdd launched only through a CUDA graph (stream capture, then 3 graph launches): its
// launches never pass the Sanitizer's LAUNCH_BEGIN, only the graph node callbacks.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void graphAdd(const float *a, const float *b, float *c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i] * 2.0f;
}

int main() {
  const int n = 4096, launches = 3;
  float h[n], *a, *b, *c;
  for (int i = 0; i < n; ++i)
    h[i] = float(i);
  cudaMalloc(&a, sizeof h);
  cudaMalloc(&b, sizeof h);
  cudaMalloc(&c, sizeof h);
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  graphAdd<<<n / 256, 256, 0, s>>>(a, b, c, n);
  cudaStreamEndCapture(s, &graph);
  if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    return 1;
  for (int i = 0; i < launches; ++i)
    cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  if (cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
    return 1;
  uint64_t sum = 1469598103934665603ull;
  for (float v : h)
    sum = (sum ^ uint64_t(v)) * 1099511628211ull;
  std::printf("threads %d launches %d checksum %016llx\n", n, launches, (unsigned long long)sum);
  return 0;
}
