// Two CUDA contexts (driver API), on two GPUs where the machine has them, else both on GPU 0,
// each loading the same module and launching scale<<<2, 128>>> once: gpubt keeps one set of
// device maps per context and merges them.
// Usage: multi_ctx SCALE.cubin
#include <cstdint>
#include <cstdio>
#include <cuda.h>

extern "C" __global__ void scale(float *x, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] *= f;
}

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    CUresult r = (x);                                                                              \
    if (r != CUDA_SUCCESS) {                                                                       \
      std::fprintf(stderr, "%s: error %d\n", #x, int(r));                                          \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  CHECK(cuInit(0));
  int devices = 0;
  CHECK(cuDeviceGetCount(&devices));
  std::printf("devices %d\n", devices < 2 ? 1 : 2);
  uint64_t sum = 1469598103934665603ull;
  for (int c = 0; c < 2; ++c) {
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, c % devices));
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
    CUmodule mod;
    CHECK(cuModuleLoad(&mod, argv[1]));
    CUfunction fn;
    CHECK(cuModuleGetFunction(&fn, mod, "scale"));
    float host[256];
    for (int i = 0; i < 256; ++i)
      host[i] = float(i + c);
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, sizeof host));
    CHECK(cuMemcpyHtoD(d, host, sizeof host));
    float f = 2.0f + c;
    void *args[] = {&d, &f};
    CHECK(cuLaunchKernel(fn, 2, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    CHECK(cuMemcpyDtoH(host, d, sizeof host));
    for (float v : host)
      sum = (sum ^ uint64_t(v)) * 1099511628211ull;
    CHECK(cuMemFree(d));
    if (c == 0)
      CHECK(cuCtxDestroy(ctx)); // the first context ends before the program does
  }
  std::printf("contexts 2 checksum %016llx\n", (unsigned long long)sum);
  return 0;
}
