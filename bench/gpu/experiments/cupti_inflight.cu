// Experiment for issues 25 and 26: can CUPTI's activity and callback APIs run in a process beside
// gpubt's agent (the Compute Sanitizer, patching kernels), does "launched but no completion
// record yet" name a kernel that spins, and what does each costs per launch?
//
// Usage: cupti_inflight MODE LAUNCHES
//   MODE plain:    no CUPTI: the baseline launch cost
//   MODE activity: CUPTI concurrent-kernel activity records (one per completed kernel)
//   MODE inflight: activity records + launch callbacks: in-flight kernels named every 100 ms
//   MODE memop:    no CUPTI; after every launch a 64-bit stream write (cuStreamWriteValue64) of
//                  the launch's number into mapped pinned host memory (gpubt's launch watch)
// Prints "us_per_launch X", "records N (launched M)", and, while a spin kernel runs (one block of
// 8 waits ~1.5 s on a flag the host sets), "inflight AGE_MS NAME corr C" lines.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include "experiment.cuh"


__global__ void tiny(float *x) { x[threadIdx.x] += 1.0f; }

__global__ void spin(volatile int *flag, int *finished) {
  if (blockIdx.x == 3 && threadIdx.x == 0)
    while (!*flag) {
    }
  __syncthreads();
  if (threadIdx.x == 0)
    atomicAdd(finished, 1);
}

namespace {

using Clock = std::chrono::steady_clock;
std::mutex mu;
std::map<uint32_t, std::pair<std::string, Clock::time_point>> launched; // correlation id
std::atomic<long> records{0}, launches{0};

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      continue;
    auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(rec);
    ++records;
    std::lock_guard<std::mutex> lock(mu);
    launched.erase(k->correlationId);
  }
  free(buffer);
}

void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *data) {
  auto *d = static_cast<const CUpti_CallbackData *>(data);
  if (d->callbackSite != CUPTI_API_ENTER)
    return;
  ++launches;
  std::lock_guard<std::mutex> lock(mu);
  launched[d->correlationId] = {d->symbolName ? d->symbolName : "?", Clock::now()};
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "plain";
  int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  bool memop = mode == "memop";
  bool cupti = mode != "plain" && !memop, inflight = mode == "inflight";
  CUpti_SubscriberHandle sub{};
  if (cupti) {
    CHECK(cuptiActivityRegisterCallbacks(cupti_buffer_requested, completed));
    CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  if (inflight) {
    CHECK(cuptiSubscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(on_api), nullptr));
    CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  }
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  for (int i = 0; i < 100; ++i) // warm-up
    tiny<<<1, 256>>>(x);
  CHECK(cudaDeviceSynchronize());
  uint64_t *word = nullptr;
  CUdeviceptr word_dev = 0;
  CHECK(cudaHostAlloc(&word, sizeof *word, cudaHostAllocMapped));
  CHECK(cuMemHostGetDevicePointer(&word_dev, word, 0));
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    tiny<<<1, 256>>>(x);
    if (memop)
      CHECK(cuStreamWriteValue64(0, word_dev, uint64_t(i) + 1, 0));
  }
  CHECK(cudaDeviceSynchronize());
  if (memop)
    std::printf("memop word %llu (want %d)\n", (unsigned long long)*word, n);
  double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
  std::printf("us_per_launch %.3f\n", us);

  int *flag, *finished;
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaMallocManaged(&finished, sizeof(int)));
  *flag = 0;
  *finished = 0;
  std::atomic<bool> stop{false};
  std::thread poller([&] {
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (cupti)
        cuptiActivityFlushAll(0);
      std::lock_guard<std::mutex> lock(mu);
      if (!launched.empty()) {
        auto &[corr, what] = *launched.begin();
        auto age = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                          what.second);
        std::printf("inflight %lld %s corr %u (%zu in flight)\n", (long long)age.count(),
                    what.first.c_str(), corr, launched.size());
      }
    }
  });
  spin<<<8, 64>>>(flag, finished);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  *flag = 1;
  CHECK(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  poller.join();
  if (cupti)
    CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  float host[1];
  CHECK(cudaMemcpy(host, x, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("spin blocks finished %d; x[0] %.0f (want %d)\n", *finished, host[0], n + 100);
  std::printf("records %ld (launched %ld)\n", records.load(), launches.load());
  return 0;
}
