// What the GPU test programs share: error checks that print the failing call and return 1 from
// main, the FNV-1a checksum their output lines carry, and %globaltimer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
