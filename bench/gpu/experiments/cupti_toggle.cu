// Experiment for issue 25: CUPTI's kernel activity as the launch-level timer of a gpubt session,
// beside the Compute Sanitizer that gpubt's agent uses for everything else.
//
// Usage: cupti_toggle LAUNCHES
// Three phases of LAUNCHES launches of tiny kernels, each phase its own kernel (k_before, k_during,
// k_after) and, in the middle one, a CUDA graph of 4 kernel nodes (k_graph) replayed LAUNCHES/4
// times; CUPTI's concurrent-kernel activity is on only during the middle phase (enabled after
// the context exists, as an attach would, disabled and flushed after it). Prints each phase's host
// cost per launch and the CUPTI records it got per kernel name. Run under `gpubt -c` with
// `gpu:kprobe:k_* /tid == 0/ { @[kernel] = count(); }` to see which phases the Sanitizer patched.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include "experiment.cuh"


__global__ void k_before(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_during(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_graph(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_after(float *x) { x[threadIdx.x] += 1.0f; }

namespace {

std::map<std::string, long> per_kernel;
long graph_nodes_seen = 0;

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(rec);
      ++per_kernel[k->name ? k->name : "?"];
      graph_nodes_seen += k->graphNodeId != 0;
    }
  free(buffer);
}

double phase(const char *name, void (*kernel)(float *), float *x, int n, cudaStream_t s) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    kernel<<<1, 256, 0, s>>>(x);
  CHECK(cudaStreamSynchronize(s));
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("phase %-9s %.3f us/launch\n", name, us);
  return us;
}

} // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 4; ++i)
    k_graph<<<1, 256, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 100; ++i) // warm-up (k_before's module loaded)
    k_before<<<1, 256, 0, s>>>(x);
  CHECK(cudaStreamSynchronize(s));

  phase("before", k_before, x, n, s);
  CHECK(cuptiActivityRegisterCallbacks(cupti_buffer_requested, completed));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  phase("during", k_during, x, n, s);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n / 4; ++i)
    CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  std::printf("phase graph     %.3f us/replay of 4\n",
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                      .count() / (n / 4));
  CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  phase("after", k_after, x, n, s);
  CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  for (const auto &[name, count] : per_kernel)
    std::printf("cupti %s %ld\n", name.c_str(), count);
  std::printf("cupti graph-node records %ld (want %d)\n", graph_nodes_seen, n / 4 * 4);
  float host[1];
  CHECK(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("x[0] %.0f (want %d)\n", host[0], 100 + 3 * n + n / 4 * 4);
  return 0;
}
