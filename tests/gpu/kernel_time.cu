// Known truth for kerneltime: busyA, busyB and busyC (64 blocks x 256 threads, all resident on
// an H100) spin every thread on %globaltimer for A_US, B_US and C_US. Each launch is bracketed by
// CUDA events on its stream; gate (one thread, GATE_US) runs first on the same stream, so both
// events and the kernel are queued before the GPU gets to them and the events time the GPU only,
// not the host's launch call (with gpubt's launch callback in it). Launch 0 of each kernel is a
// warm-up (under gpubt it also instruments and sets the kernel up); then ROUNDS more.
// Usage: kernel_time [ROUNDS=5] [A_US=400] [B_US=1500] [C_US=3000] [GATE_US=2000].
// Prints `event_us KERNEL I US` per launch (I = 0 the warm-up), then a checksum.
#include <cstdlib>

#include "check.cuh"

constexpr int kBlocks = 64, kThreads = 256;

// Every thread spins NS from its own start; thread 0 of each block counts the block in *OUT.
__device__ __forceinline__ void spin_for(uint64_t ns, unsigned *out) {
  uint64_t until = globaltimer() + ns;
  unsigned n = 0;
  while (globaltimer() < until)
    ++n;
  if (threadIdx.x == 0)
    atomicAdd(out, n != 0);
}

__global__ void busyA(uint64_t ns, unsigned *out) { spin_for(ns, &out[0]); }
__global__ void busyB(uint64_t ns, unsigned *out) { spin_for(ns, &out[1]); }
__global__ void busyC(uint64_t ns, unsigned *out) { spin_for(ns, &out[2]); }
__global__ void gate(uint64_t ns, unsigned *out) { spin_for(ns, &out[3]); }

using Kernel = void (*)(uint64_t, unsigned *);

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  struct {
    const char *name;
    Kernel fn;
    int us;
  } ks[] = {{"busyA", busyA, argc > 2 ? std::atoi(argv[2]) : 400},
            {"busyB", busyB, argc > 3 ? std::atoi(argv[3]) : 1500},
            {"busyC", busyC, argc > 4 ? std::atoi(argv[4]) : 3000}};
  int gate_us = argc > 5 ? std::atoi(argv[5]) : 2000;
  unsigned *d;
  CHECK(cudaMalloc(&d, 4 * sizeof(unsigned)));
  CHECK(cudaMemset(d, 0, 4 * sizeof(unsigned)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  // Loaded now, not at their first launch (lazy loading).
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, gate));
  for (auto &k : ks)
    CHECK(cudaFuncGetAttributes(&attr, k.fn));
  for (int r = 0; r <= rounds; ++r) {
    for (auto &k : ks) {
      gate<<<1, 1, 0, s>>>(uint64_t(gate_us) * 1000, d);
      CHECK(cudaEventRecord(e0, s));
      k.fn<<<kBlocks, kThreads, 0, s>>>(uint64_t(k.us) * 1000, d);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(e1, s));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      std::printf("event_us %s %d %.1f\n", k.name, r, ms * 1000.0);
      std::fflush(stdout);
    }
  }
  unsigned h[4];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("rounds %d us %d,%d,%d blocks %d threads %d checksum %016llx\n", rounds, ks[0].us,
              ks[1].us, ks[2].us, kBlocks, kThreads, (unsigned long long)fnv1a(h, sizeof h));
  return 0;
}
