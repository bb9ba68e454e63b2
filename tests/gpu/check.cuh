// What the GPU test programs share: error checks that print the failing call and return 1 from
// main, the FNV-1a checksum their output lines carry, %globaltimer, and the program's own
// measurement of it against CLOCK_MONOTONIC.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                 \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

#define CHECK_CU(x)                                                                                \
  do {                                                                                             \
    CUresult r = (x);                                                                              \
    if (r != CUDA_SUCCESS) {                                                                       \
      const char *s = "?";                                                                         \
      cuGetErrorString(r, &s);                                                                     \
      std::fprintf(stderr, "%s: %s\n", #x, s);                                                     \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

constexpr uint64_t kFnvBasis = 1469598103934665603ull;

// FNV-1a over N bytes at P, continuing from H.
inline uint64_t fnv1a(const void *p, size_t n, uint64_t h = kFnvBasis) {
  for (size_t i = 0; i < n; ++i)
    h = (h ^ static_cast<const unsigned char *>(p)[i]) * 1099511628211ull;
  return h;
}

// The GPU's nanosecond timer (what gpubt maps to the host's CLOCK_MONOTONIC).
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Answers request k (the host writes *req = k) with ans[1] = %globaltimer, then ans[0] = k, for
// k = 1..N; *req = ~0 stops it.
__global__ void pingpong(volatile uint64_t *req, volatile uint64_t *ans, int n) {
  for (uint64_t k = 1; k <= uint64_t(n); ++k) {
    uint64_t r;
    while ((r = *req) < k) {
    }
    if (r == ~0ull)
      return;
    ans[1] = globaltimer();
    __threadfence_system();
    ans[0] = k;
  }
}

inline int64_t mono_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// CLOCK_MONOTONIC - %globaltimer now, as the program measures it: the narrowest of ROUNDS
// pingpong round trips through mapped memory (good to ~1.5 us on the H100). 0 on failure.
inline int64_t mono_minus_globaltimer(int rounds = 16) {
  uint64_t *host = nullptr, *dev = nullptr;
  cudaStream_t s;
  if (cudaHostAlloc(&host, 64, cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer((void **)&dev, host, 0) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
    return 0;
  volatile uint64_t *req = host, *ans = host + 4; // the answer in its own 32 bytes
  req[0] = ans[0] = 0;
  pingpong<<<1, 1, 0, s>>>(dev, dev + 4, rounds);
  int64_t best = 0, best_width = INT64_MAX;
  for (int k = 1; k <= rounds; ++k) {
    int64_t t0 = mono_ns();
    *req = uint64_t(k);
    while (ans[0] != uint64_t(k))
      if (mono_ns() - t0 > 1000000000) {
        *req = ~0ull;
        cudaStreamSynchronize(s);
        return 0;
      }
    int64_t t1 = mono_ns();
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      best = t0 + (t1 - t0) / 2 - int64_t(ans[1]);
    }
  }
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  cudaFreeHost(host);
  return best;
}
