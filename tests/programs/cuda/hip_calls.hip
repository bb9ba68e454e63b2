// HIP runtime calls for the `hip` library probes, mirroring cuda_calls.cu: hipMalloc 1024 B x3,
// 4096 B x2, 1 MiB x1; hipMemcpy host->device x3, device->host x1; hipMemcpyAsync x1;
// hipLaunchKernel(scale) x4 called explicitly (without a GPU, <<<>>> stops at a failing
// __hipPushCallConfiguration and never reaches hipLaunchKernel); hipModuleLaunchKernel x1;
// stream and device syncs; hipFree of each allocation. Every call is made even when it fails.
// Optional argv[1]: seconds to sleep first (lets a tracer attach with -p).
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <hip/hip_runtime.h>

__global__ void scale(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= 2.0f;
}

static void report(const char *what, hipError_t err) {
  fprintf(stderr, "%s: %d %s\n", what, (int)err, hipGetErrorName(err));
}

int main(int argc, char **argv) {
  if (argc > 1)
    sleep(atoi(argv[1]));
  const size_t sizes[] = {1024, 1024, 1024, 4096, 4096, 1 << 20};
  void *bufs[6] = {};
  for (int i = 0; i < 6; ++i)
    report("hipMalloc", hipMalloc(&bufs[i], sizes[i]));

  static float host[1 << 18];
  for (int i = 0; i < 3; ++i)
    report("hipMemcpy", hipMemcpy(bufs[i], host, sizes[i], hipMemcpyHostToDevice));

  hipStream_t stream = nullptr;
  report("hipStreamCreate", hipStreamCreate(&stream));
  report("hipMemcpyAsync", hipMemcpyAsync(bufs[3], host, 4096, hipMemcpyHostToDevice, stream));

  float *data = static_cast<float *>(bufs[5]);
  int n = 256;
  void *args[] = {&data, &n};
  for (int i = 0; i < 4; ++i)
    report("hipLaunchKernel", hipLaunchKernel(reinterpret_cast<const void *>(&scale), dim3(2, 1, 1),
                                              dim3(128, 1, 1), args, 0, stream));
  report("hipModuleLaunchKernel",
         hipModuleLaunchKernel(nullptr, 2, 1, 1, 128, 1, 1, 0, stream, args, nullptr));
  report("hipStreamSynchronize", hipStreamSynchronize(stream));
  report("hipDeviceSynchronize", hipDeviceSynchronize());
  report("hipMemcpy", hipMemcpy(host, bufs[5], sizeof(float) * n, hipMemcpyDeviceToHost));

  for (int i = 0; i < 6; ++i)
    report("hipFree", hipFree(bufs[i]));
  return 0;
}
