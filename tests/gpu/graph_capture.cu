// Kernels that run only inside CUDA graphs: one captured from a stream (capAdd twice, capScale,
// a memset node), one built node by node (capAdd), each instantiated and launched 3 times.
// capAdd runs 3 x 2 + 3 x 1 = 9 times over 4096 threads; the checksum covers both graphs' output.
#include "check.cuh"

__global__ void capAdd(float *c, const float *a, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] += a[i];
}

__global__ void capScale(float *c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] *= 0.5f;
}

int main() {
  const int n = 4096, threads = 256, blocks = n / threads, launches = 3;
  static float h[n];
  for (int i = 0; i < n; ++i)
    h[i] = float(i % 500);
  float *a, *c, *d;
  CHECK(cudaMalloc(&a, sizeof h));
  CHECK(cudaMalloc(&c, sizeof h));
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d, 0, sizeof h));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));

  // Captured: c = (0 + a + a) * 0.5 on every graph launch.
  cudaGraph_t captured;
  cudaGraphExec_t captured_exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaMemsetAsync(c, 0, sizeof h, s);
  capAdd<<<blocks, threads, 0, s>>>(c, a, n);
  capAdd<<<blocks, threads, 0, s>>>(c, a, n);
  capScale<<<blocks, threads, 0, s>>>(c, n);
  CHECK(cudaStreamEndCapture(s, &captured));
  CHECK(cudaGraphInstantiate(&captured_exec, captured, 0));

  // Built by hand: d += a on every graph launch.
  cudaGraph_t built;
  cudaGraphExec_t built_exec;
  CHECK(cudaGraphCreate(&built, 0));
  int count = n;
  void *args[] = {&d, &a, &count};
  cudaKernelNodeParams p = {};
  p.func = (void *)capAdd;
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CHECK(cudaGraphAddKernelNode(&node, built, nullptr, 0, &p));
  CHECK(cudaGraphInstantiate(&built_exec, built, 0));

  for (int l = 0; l < launches; ++l) {
    CHECK(cudaGraphLaunch(captured_exec, s));
    CHECK(cudaGraphLaunch(built_exec, s));
  }
  CHECK(cudaStreamSynchronize(s));
  uint64_t sum = kFnvBasis; // over c's and d's bytes
  for (float *dev : {c, d}) {
    CHECK(cudaMemcpy(h, dev, sizeof h, cudaMemcpyDeviceToHost));
    sum = fnv1a(h, sizeof h, sum);
  }
  std::printf("threads %d launches %d checksum %016llx\n", n, launches, (unsigned long long)sum);
  cudaGraphExecDestroy(captured_exec);
  cudaGraphExecDestroy(built_exec);
  cudaGraphDestroy(captured);
  cudaGraphDestroy(built);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(c);
  cudaFree(d);
  return 0;
}
