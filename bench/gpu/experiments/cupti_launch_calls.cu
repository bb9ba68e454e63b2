// Experiment for issue 25 (launchlate at <= 1.02x): what each way of getting a launch's call time
// from CUPTI costs the launching thread, and which API records the kernel records correlate with.
//
// Usage: cupti_launch_calls MODE LAUNCHES
// MODE: none (no CUPTI), kernel (concurrent-kernel activity only: kerneltime's cost), queued
// (+ cuptiActivityEnableLatencyTimestamps: the launch timer before this experiment), runtime,
// driver, both (+ API records of the launch calls alone: cuptiActivityEnableRuntimeApi /
// cuptiActivityEnableDriverApi per cbid, what launch_calls.h matches), after (both, switched on
// after the kernel kind), rtkind (the whole RUNTIME kind), callback (no API records: the callback
// API's enter callbacks of the launch calls take each call's time and correlation id, what an
// attach's launch timer uses). CUPTI always starts after the context here, as in an attach.
// Three phases of LAUNCHES launches of a tiny kernel: runtime <<<>>>, driver cuLaunchKernel, and a
// 4-node CUDA graph replayed LAUNCHES/4 times. Prints each phase's host cost per launch and, per
// phase, how many kernel records had a runtime / driver API record with their correlation id.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include "experiment.cuh"

__global__ void k_runtime(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_driver(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k_graph(float *x) { x[threadIdx.x] += 1.0f; }

namespace {

struct Seen {
  std::set<uint32_t> runtime_ids, driver_ids, callback_ids;
  std::vector<uint32_t> called; // the callback's ids, appended (cheap, as the agent's)
  std::vector<std::pair<std::string, uint32_t>> kernels;
} seen;

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(rec);
      seen.kernels.emplace_back(k->name ? k->name : "?", uint32_t(k->correlationId));
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      seen.runtime_ids.insert(uint32_t(reinterpret_cast<CUpti_ActivityAPI *>(rec)->correlationId));
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      seen.driver_ids.insert(uint32_t(reinterpret_cast<CUpti_ActivityAPI *>(rec)->correlationId));
    }
  }
  free(buffer);
}

void CUPTIAPI on_call(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *data) {
  auto *d = static_cast<const CUpti_CallbackData *>(data);
  if (d->callbackSite == CUPTI_API_ENTER)
    seen.called.push_back(d->correlationId);
}

template <class Launch> double per_launch_us(int n, cudaStream_t s, Launch launch) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    launch();
  CHECK(cudaStreamSynchronize(s));
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         n;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "none";
  int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  float *x = nullptr;
  CHECK(cudaMalloc(&x, 256 * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUfunction driver_fn;
  CHECK(cudaGetFuncBySymbol(&driver_fn, reinterpret_cast<const void *>(k_driver)));
  cudaGraph_t g;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 4; ++i)
    k_graph<<<1, 256, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  void *args[] = {&x};
  auto runtime = [&] { k_runtime<<<1, 256, 0, s>>>(x); };
  auto driver = [&] {
    cuLaunchKernel(driver_fn, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr);
  };
  auto graph = [&] { cudaGraphLaunch(exec, s); };
  // Warm: modules loaded, the graph uploaded.
  per_launch_us(200, s, runtime), per_launch_us(200, s, driver), per_launch_us(50, s, graph);

  if (mode != "none") {
    CHECK(cuptiActivityRegisterCallbacks(cupti_buffer_requested, completed));
    if (mode == "queued")
      CHECK(cuptiActivityEnableLatencyTimestamps(1));
    if (mode == "rtkind")
      CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    if (mode == "callback") {
      CUpti_SubscriberHandle sub;
      CHECK(cuptiSubscribe(&sub, on_call, nullptr));
      for (CUpti_CallbackId id :
           {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
            CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
            CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000})
        CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id));
      for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                  CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch})
        CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id));
    }
    if (mode == "after")
      CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    if (mode == "runtime" || mode == "both" || mode == "after")
      for (CUpti_CallbackId id :
           {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
            CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
            CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000})
        CHECK(cuptiActivityEnableRuntimeApi(id, 1));
    if (mode == "driver" || mode == "both" || mode == "after")
      for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                  CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch})
        CHECK(cuptiActivityEnableDriverApi(id, 1));
    if (mode != "after")
      CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  double rt = per_launch_us(n, s, runtime);
  double dr = per_launch_us(n, s, driver);
  double gr = per_launch_us(n / 4, s, graph) / 4;
  if (mode != "none")
    CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::printf("mode %-8s us/launch runtime %.3f driver %.3f graph-node %.3f\n", mode.c_str(), rt,
              dr, gr);
  seen.callback_ids.insert(seen.called.begin(), seen.called.end());
  for (const char *name : {"k_runtime", "k_driver", "k_graph"}) {
    long total = 0, by_runtime = 0, by_driver = 0, by_callback = 0;
    for (const auto &[k, id] : seen.kernels)
      if (k.find(name) != std::string::npos) {
        ++total;
        by_runtime += seen.runtime_ids.count(id);
        by_driver += seen.driver_ids.count(id);
        by_callback += seen.callback_ids.count(id);
      }
    if (mode != "none")
      std::printf("  %-9s kernel records %ld, with a runtime API record %ld, a driver one %ld, "
                  "an enter callback %ld\n",
                  name, total, by_runtime, by_driver, by_callback);
  }
  return 0;
}
