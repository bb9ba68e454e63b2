// A stand-in libcudart.so.13 for the dlopen tests (dlopen_calls.c, fake_torch.cpp): cudaMalloc and
// cudaFree with the real signatures, succeeding, in a library the traced executable does not link.
#include <cstddef>
#include <cstdint>

static uintptr_t next_addr = 0x7e0000000000;

extern "C" {
__attribute__((noinline)) int cudaMalloc(void **devPtr, size_t size) {
  *devPtr = reinterpret_cast<void *>(next_addr);
  next_addr += (size + 0xfffff) & ~uintptr_t(0xfffff);
  return 0;
}
__attribute__((noinline)) int cudaFree(void *) { return 0; }
}
