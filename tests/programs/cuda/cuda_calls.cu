// The CUDA runtime calls issue 3's "Done when" counts: cudaMalloc 1024 B x3, 4096 B x2, 1 MiB x1;
// cudaMemcpy host->device x3, device->host x1; `scale` launched x4 with <<<>>>; plus the
// sync/stream/event calls. Every call is made whether or not the previous one failed, so on a
// machine without a GPU each returns cudaErrorInsufficientDriver (35) and the probes still fire.
// Optional argv[1]: seconds to sleep first (lets a tracer attach with -p).
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <cuda_runtime.h>

__global__ void scale(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= 2.0f;
}

static void report(const char *what, cudaError_t err) {
  fprintf(stderr, "%s: %d %s\n", what, (int)err, cudaGetErrorName(err));
}

int main(int argc, char **argv) {
  if (argc > 1)
    sleep(atoi(argv[1]));
  const size_t sizes[] = {1024, 1024, 1024, 4096, 4096, 1 << 20};
  void *bufs[6] = {};
  for (int i = 0; i < 6; ++i)
    report("cudaMalloc", cudaMalloc(&bufs[i], sizes[i]));

  static float host[1 << 18];
  for (int i = 0; i < 3; ++i)
    report("cudaMemcpy", cudaMemcpy(bufs[i], host, sizes[i], cudaMemcpyHostToDevice));

  const int n = 256;
  for (int i = 0; i < 4; ++i) {
    scale<<<dim3(2, 1, 1), dim3(128, 1, 1)>>>(static_cast<float *>(bufs[5]), n);
    report("launch scale", cudaGetLastError());
  }
  report("cudaDeviceSynchronize", cudaDeviceSynchronize());
  report("cudaMemcpy", cudaMemcpy(host, bufs[5], sizeof(float) * n, cudaMemcpyDeviceToHost));

  cudaStream_t stream = nullptr;
  report("cudaStreamCreate", cudaStreamCreate(&stream));
  report("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  cudaEvent_t event = nullptr;
  report("cudaEventCreate", cudaEventCreate(&event));
  report("cudaEventRecord", cudaEventRecord(event, stream));
  report("cudaEventSynchronize", cudaEventSynchronize(event));
  report("cudaStreamDestroy", cudaStreamDestroy(stream));

  for (int i = 0; i < 6; ++i)
    report("cudaFree", cudaFree(bufs[i]));
  return 0;
}
