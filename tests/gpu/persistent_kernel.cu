// A kernel that runs until told to stop (a persistent kernel, or a hung one) beside short kernels
// launched on command, for gpubt attaching and detaching while it runs (issue 23: patching must
// not hold the program's launches for ever, nor patch under the running kernel).
// Commands on stdin, one answer line each:
//   spin     -> "spinning": spin_kernel starts on its own stream and runs until "stop"
//   stop     -> "stopped ITERATIONS": it was told to stop and ended
//   burst N  -> "burst N launches TOTAL ms MS": N tick_kernel launches on another stream, synced
//   quit     -> exit 0 (1 with a message on any CUDA error)
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "check.cuh"

__global__ void spin_kernel(volatile int *stop, unsigned long long *iterations) {
  unsigned long long n = 0;
  while (*stop == 0) {
    ++n;
    __nanosleep(2000);
  }
  if (threadIdx.x == 0)
    *iterations = n;
}

__global__ void tick_kernel(unsigned long long *ticks) {
  if (threadIdx.x == 0)
    atomicAdd(ticks, 1ull);
}

int main() {
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  int *stop_host = nullptr, *stop_dev = nullptr;
  CHECK(cudaHostAlloc(&stop_host, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&stop_dev), stop_host, 0));
  unsigned long long *iterations = nullptr, *ticks = nullptr;
  CHECK(cudaMalloc(&iterations, sizeof *iterations));
  CHECK(cudaMalloc(&ticks, sizeof *ticks));
  CHECK(cudaMemset(ticks, 0, sizeof *ticks));
  cudaStream_t spin_stream, tick_stream;
  CHECK(cudaStreamCreateWithFlags(&spin_stream, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&tick_stream, cudaStreamNonBlocking));
  // Loaded now: with CUDA's lazy loading, a kernel's first launch while spin_kernel runs would
  // wait for it to end (a deadlock of the program's own, gpubt or not).
  tick_kernel<<<1, 32, 0, tick_stream>>>(ticks);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemset(ticks, 0, sizeof *ticks));
  std::cout << "ready" << std::endl;
  std::string cmd;
  while (std::cin >> cmd) {
    if (cmd == "spin") {
      *reinterpret_cast<volatile int *>(stop_host) = 0;
      spin_kernel<<<1, 32, 0, spin_stream>>>(stop_dev, iterations);
      CHECK(cudaGetLastError());
      std::cout << "spinning" << std::endl;
    } else if (cmd == "stop") {
      *reinterpret_cast<volatile int *>(stop_host) = 1;
      CHECK(cudaStreamSynchronize(spin_stream));
      unsigned long long n = 0;
      CHECK(cudaMemcpy(&n, iterations, sizeof n, cudaMemcpyDeviceToHost));
      std::cout << "stopped " << n << std::endl;
    } else if (cmd == "burst") {
      int n = 0;
      std::cin >> n;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i)
        tick_kernel<<<1, 32, 0, tick_stream>>>(ticks);
      CHECK(cudaGetLastError());
      CHECK(cudaStreamSynchronize(tick_stream));
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            start).count();
      unsigned long long total = 0;
      CHECK(cudaMemcpyAsync(&total, ticks, sizeof total, cudaMemcpyDeviceToHost, tick_stream));
      CHECK(cudaStreamSynchronize(tick_stream));
      std::cout << "burst " << n << " launches " << total << " ms " << ms << std::endl;
    } else if (cmd == "quit") {
      break;
    }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
