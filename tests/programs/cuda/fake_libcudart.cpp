// A stand-in libcudart.so.13 for the dlopen tests (dlopen_calls.c, fake_torch.cpp) and the Python
// tools' tests (tests/e2e/pystack: loaded with ctypes): cudaMalloc, cudaMallocManaged,
// cudaMallocAsync, cudaFree, cudaFreeAsync and cudaLaunchKernel with the real signatures,
// succeeding, in a library the traced executable does not link.
#include <cstddef>
#include <cstdint>

static uintptr_t next_addr = 0x7e0000000000;

struct dim3 {
  unsigned x, y, z;
};
typedef struct CUstream_st *cudaStream_t;

// Not through cudaMalloc: a probe on it must not see the other allocations.
static int take(void **devPtr, size_t size) {
  *devPtr = reinterpret_cast<void *>(next_addr);
  next_addr += (size + 0xfffff) & ~uintptr_t(0xfffff);
  return 0;
}

extern "C" {
__attribute__((noinline)) int cudaMalloc(void **devPtr, size_t size) { return take(devPtr, size); }
__attribute__((noinline)) int cudaMallocManaged(void **devPtr, size_t size, unsigned) {
  return take(devPtr, size);
}
__attribute__((noinline)) int cudaMallocAsync(void **devPtr, size_t size, cudaStream_t) {
  return take(devPtr, size);
}
__attribute__((noinline)) int cudaFree(void *) { return 0; }
__attribute__((noinline)) int cudaFreeAsync(void *, cudaStream_t) { return 0; }
__attribute__((noinline)) int cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                                               cudaStream_t) {
  return 0;
}
}
