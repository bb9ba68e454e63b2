// Known truth for launchlate: tinyQueued is launched right behind spin (busy for SPIN_US on
// %globaltimer) on the same stream, so it starts about SPIN_US after its launch call (less the
// few microseconds between spin's start and tinyQueued's launch call); tinyIdle is launched on
// an idle stream and starts within microseconds. A first round, then ROUNDS more.
// Usage: launch_queue [SPIN_US=5200] [ROUNDS=5]. Prints the spin and a checksum.
#include <cstdlib>

#include "check.cuh"

__global__ void spin(uint64_t ns, unsigned *out) {
  uint64_t until = globaltimer() + ns;
  unsigned n = 0;
  while (globaltimer() < until)
    ++n;
  out[0] = n != 0;
}

__global__ void tinyQueued(unsigned *out) { atomicAdd(&out[1], 1u); }
__global__ void tinyIdle(unsigned *out) { atomicAdd(&out[2], 1u); }

int main(int argc, char **argv) {
  int spin_us = argc > 1 ? std::atoi(argv[1]) : 5200;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  unsigned *d;
  CHECK(cudaMalloc(&d, 3 * sizeof(unsigned)));
  CHECK(cudaMemset(d, 0, 3 * sizeof(unsigned)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Loaded now, not at their first launch (lazy loading would add to that launch's wait).
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, spin));
  CHECK(cudaFuncGetAttributes(&attr, tinyQueued));
  CHECK(cudaFuncGetAttributes(&attr, tinyIdle));
  for (int r = 0; r <= rounds; ++r) {
    spin<<<1, 1, 0, s>>>(uint64_t(spin_us) * 1000, d);
    tinyQueued<<<1, 32, 0, s>>>(d);
    CHECK(cudaStreamSynchronize(s));
    tinyIdle<<<1, 32, 0, s>>>(d);
    CHECK(cudaStreamSynchronize(s));
  }
  unsigned h[3];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("spin_us %d rounds %d checksum %016llx\n", spin_us, rounds,
              (unsigned long long)fnv1a(h, sizeof h));
  return 0;
}
