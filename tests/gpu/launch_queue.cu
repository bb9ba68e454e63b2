// Known truth for launchlate: tinyQueued is launched right behind spin (busy for SPIN_US on
// %globaltimer) on the same stream, so it starts about SPIN_US after its launch call (less the
// few microseconds between spin's start and tinyQueued's launch call); tinyIdle is launched on
// an idle stream and starts within microseconds. A first round, then ROUNDS more.
// The program measures each tiny launch itself too: CLOCK_MONOTONIC right before the launch
// call, %globaltimer at the kernel's first thread, the two clocks related by pingpong at the end
// (check.cuh), printed as "self NAME ROUND LATENCY_NS CALL_NS" (CALL_NS: the launch call's own
// duration, where a tracer's per-launch work shows).
// Usage: launch_queue [SPIN_US=5200] [ROUNDS=5]. Prints the spin and a checksum.
#include <cstdlib>
#include <vector>

#include "check.cuh"

__global__ void spin(uint64_t ns, unsigned *out) {
  uint64_t until = globaltimer() + ns;
  unsigned n = 0;
  while (globaltimer() < until)
    ++n;
  out[0] = n != 0;
}

__global__ void tinyQueued(unsigned *out, uint64_t *start) {
  if (threadIdx.x == 0)
    *start = globaltimer();
  atomicAdd(&out[1], 1u);
}
__global__ void tinyIdle(unsigned *out, uint64_t *start) {
  if (threadIdx.x == 0)
    *start = globaltimer();
  atomicAdd(&out[2], 1u);
}

int main(int argc, char **argv) {
  int spin_us = argc > 1 ? std::atoi(argv[1]) : 5200;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  int launches = 2 * (rounds + 1);
  unsigned *d;
  uint64_t *starts;
  CHECK(cudaMalloc(&d, 3 * sizeof(unsigned)));
  CHECK(cudaMemset(d, 0, 3 * sizeof(unsigned)));
  CHECK(cudaMalloc(&starts, launches * sizeof(uint64_t)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Loaded now, not at their first launch (lazy loading would add to that launch's wait).
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, spin));
  CHECK(cudaFuncGetAttributes(&attr, tinyQueued));
  CHECK(cudaFuncGetAttributes(&attr, tinyIdle));
  std::vector<int64_t> before(launches), after(launches);
  for (int r = 0; r <= rounds; ++r) {
    spin<<<1, 1, 0, s>>>(uint64_t(spin_us) * 1000, d);
    before[2 * r] = mono_ns();
    tinyQueued<<<1, 32, 0, s>>>(d, starts + 2 * r);
    after[2 * r] = mono_ns();
    CHECK(cudaStreamSynchronize(s));
    before[2 * r + 1] = mono_ns();
    tinyIdle<<<1, 32, 0, s>>>(d, starts + 2 * r + 1);
    after[2 * r + 1] = mono_ns();
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaGetLastError());
  int64_t offset = mono_minus_globaltimer();
  std::vector<uint64_t> h_starts(launches);
  CHECK(cudaMemcpy(h_starts.data(), starts, launches * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  for (int i = 0; offset && i < launches; ++i)
    std::printf("self %s %d %lld %lld\n", i % 2 ? "tinyIdle" : "tinyQueued", i / 2,
                (long long)(int64_t(h_starts[i]) + offset - before[i]),
                (long long)(after[i] - before[i]));
  unsigned h[3];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("spin_us %d rounds %d checksum %016llx\n", spin_us, rounds,
              (unsigned long long)fnv1a(h, sizeof h));
  return 0;
}
