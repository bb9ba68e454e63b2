// Stands in for libtorch_cuda.so: links the fake libcudart.so.13, so dlopen() of this library maps
// libcudart as a dependency, and its constructor calls cudaMalloc(512) before dlopen() returns.
#include <cstddef>

extern "C" int cudaMalloc(void **devPtr, size_t size);

namespace {
struct InitCuda {
  InitCuda() {
    void *p = nullptr;
    cudaMalloc(&p, 512);
  }
} init_cuda;
} // namespace

extern "C" __attribute__((noinline)) int torch_alloc(void **p, size_t size) {
  return cudaMalloc(p, size);
}
