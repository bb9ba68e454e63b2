// A job that hangs (issue 26: a hang named within 3 s): a kernel of 16 blocks where block 5's
// first thread waits on a flag the host sets only SPIN_SECONDS later, every other block
// finishing at once, behind a few short kernels that finished. With --wait, the program says
// "ready PID" (CUDA up, the short kernels done) and waits for a line before the hang, so that a
// gpubt -p can attach first. Prints "hang_kernel: spinning since NS" (CLOCK_MONOTONIC) at the
// hang's launch and "hang_kernel: ok SUM" at the end (SUM: the blocks' result, checked). With
// --graph the stuck kernel is the one kernel node of a CUDA graph, replayed on a stream.
// Usage: hang_kernel [SPIN_SECONDS=6] [--wait] [--graph]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>

#include "check.cuh"

__global__ void warm_kernel(int *out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

__global__ void stuck_kernel(volatile int *flag, int *out) {
  if (blockIdx.x == 5 && threadIdx.x == 0)
    while (*flag == 0)
      __nanosleep(1000);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
}

int main(int argc, char **argv) {
  int seconds = argc > 1 ? std::atoi(argv[1]) : 6;
  bool wait = false, graph = false;
  for (int i = 2; i < argc; ++i)
    (std::strcmp(argv[i], "--graph") == 0 ? graph : wait) = true;
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  int *flag_host = nullptr, *flag_dev = nullptr, *out = nullptr;
  CHECK(cudaHostAlloc(&flag_host, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&flag_dev), flag_host, 0));
  *flag_host = 0;
  const int blocks = 16, threads = 128, n = blocks * threads;
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  for (int i = 0; i < 3; ++i)
    warm_kernel<<<blocks, threads>>>(out);
  CHECK(cudaDeviceSynchronize());
  if (wait) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    std::string line;
    std::getline(std::cin, line);
  }
  cudaStream_t stream = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    stuck_kernel<<<blocks, threads, 0, stream>>>(flag_dev, out);
    CHECK(cudaStreamEndCapture(stream, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (graph)
    CHECK(cudaGraphLaunch(exec, stream));
  else
    stuck_kernel<<<blocks, threads>>>(flag_dev, out);
  CHECK(cudaGetLastError());
  std::printf("hang_kernel: spinning since %lld\n",
              static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  *flag_host = 1;
  CHECK(cudaDeviceSynchronize());
  int *host = static_cast<int *>(std::malloc(n * sizeof(int)));
  CHECK(cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; ++i) {
    if (host[i] != 2 * i) {
      std::printf("hang_kernel: wrong out[%d] = %d\n", i, host[i]);
      return 1;
    }
    sum += host[i];
  }
  std::printf("hang_kernel: ok %lld\n", sum);
  return 0;
}
