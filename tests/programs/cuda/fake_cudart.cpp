// A stand-in for a CUDA program on a GPU: it defines cudaMalloc, cudaFree, cudaLaunchKernel and
// the synchronisation calls (those the tools probe) itself (C symbols with the real signatures,
// succeeding, with sleeps for the syncs), so `cudart` resolves to this executable (as for static
// cudart) and the tools' success paths run in CI. Deterministic: a 1 MiB leak from
// alloc_workspace(), 20 alloc/free pairs of 1 GiB, 50 launches of scale(float*, int) by stub and 20
// of add(int*, int*) through a cudaKernel_t handle from __cudaGetKernel, and timed syncs (stream 3
// ms x5, device 12 ms x2, event 1.5 ms x3: mid-bucket in a usecs hist).
#include <cstddef>
#include <cstdint>
#include <ctime>

struct dim3 {
  unsigned x, y, z;
};
typedef void *cudaStream_t;
typedef void *cudaEvent_t;

static void sleep_us(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

static uintptr_t next_addr = 0x7e0000000000;

extern "C" {
__attribute__((noinline)) int cudaMalloc(void **devPtr, size_t size) {
  *devPtr = reinterpret_cast<void *>(next_addr);
  next_addr += (size + 0xfffff) & ~uintptr_t(0xfffff);
  return 0;
}
__attribute__((noinline)) int cudaMallocManaged(void **devPtr, size_t size, unsigned) {
  return cudaMalloc(devPtr, size);
}
__attribute__((noinline)) int cudaMallocAsync(void **devPtr, size_t size, cudaStream_t) {
  return cudaMalloc(devPtr, size);
}
__attribute__((noinline)) int cudaFree(void *) { return 0; }
__attribute__((noinline)) int cudaFreeAsync(void *, cudaStream_t) { return 0; }
__attribute__((noinline)) int cudaLaunchKernelExC(const void *, const void *, void **) { return 0; }
__attribute__((noinline)) int cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                                               cudaStream_t) {
  return 0;
}
// CUDA 13's <<<>>> path: a cudaKernel_t handle (a heap address on a real driver) stands for the
// stub in cudaLaunchKernel; kname() maps it back through what it learned here.
__attribute__((noinline)) int __cudaGetKernel(void **kernel, const void *) {
  *kernel = new char[16];
  return 0;
}
__attribute__((noinline)) int cudaStreamSynchronize(cudaStream_t) {
  sleep_us(3000);
  return 0;
}
__attribute__((noinline)) int cudaDeviceSynchronize() {
  sleep_us(12000);
  return 0;
}
__attribute__((noinline)) int cudaEventSynchronize(cudaEvent_t) {
  sleep_us(1500);
  return 0;
}
}

// Host stubs as nvcc would name them: kname() demangles these.
__attribute__((noinline)) void scale(float *, int) {}
__attribute__((noinline)) void add(int *, int *) {}

__attribute__((noinline)) void *alloc_workspace(size_t size) {
  void *p = nullptr;
  cudaMalloc(&p, size);
  return p;
}

int main() {
  alloc_workspace(1 << 20); // never freed
  for (int i = 0; i < 20; ++i) {
    void *p = nullptr;
    cudaMalloc(&p, size_t(1) << 30);
    cudaFree(p);
  }
  void *args[2] = {};
  for (int i = 0; i < 50; ++i)
    cudaLaunchKernel(reinterpret_cast<const void *>(&scale), {2, 1, 1}, {128, 1, 1}, args, 0,
                     nullptr);
  void *add_handle = nullptr;
  __cudaGetKernel(&add_handle, reinterpret_cast<const void *>(&add));
  for (int i = 0; i < 20; ++i)
    cudaLaunchKernel(add_handle, {1, 1, 1}, {32, 1, 1}, args, 0, nullptr);
  for (int i = 0; i < 5; ++i)
    cudaStreamSynchronize(nullptr);
  for (int i = 0; i < 2; ++i)
    cudaDeviceSynchronize();
  for (int i = 0; i < 3; ++i)
    cudaEventSynchronize(nullptr);
  return 0;
}
