// Experiment for issue 25: can a pair of CUDA events around each launch (recorded on the launch's
// stream just before and just after it, as an agent's launch callbacks can) time each kernel as
// CUPTI's kernel activity records do, and what does the pair cost a launch?
//
// Usage: event_timing [ROUNDS]
// For three regimes (queued: launches far ahead of the GPU; idle: a sync after each launch; gaps:
// the host waits ~20 us between launches), each of four kernels (a 2, 10 and 50 us busy wait on
// %globaltimer and an elementwise add over 2^20 floats) is launched ROUNDS times with an event pair
// around each launch. Prints per regime and kernel: CUPTI's mean duration, the event pair's, their
// mean and worst difference, and the kernel's own first-entry-to-last-exit (%globaltimer atomics).
// Then: events mapped to CUPTI's clock through one anchor event (how far apart absolute times
// are), and the host cost per launch of the pair (timing events, and events without timing).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include "experiment.cuh"


__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// stamps[0] = min entry, stamps[1] = max exit
__global__ void wait_ns(unsigned long long ns, unsigned long long *stamps) {
  unsigned long long t0 = global_ns();
  if (threadIdx.x == 0)
    atomicMin(&stamps[0], t0);
  while (global_ns() - t0 < ns) {
  }
  if (threadIdx.x == 0)
    atomicMax(&stamps[1], global_ns());
}

__global__ void add(const float *a, const float *b, float *c, int n, unsigned long long *stamps) {
  if (threadIdx.x == 0)
    atomicMin(&stamps[0], global_ns());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
  __syncthreads();
  if (threadIdx.x == 0)
    atomicMax(&stamps[1], global_ns());
}

namespace {

struct Span {
  uint64_t start, end;
};
std::vector<Span> cupti_spans; // in completion-buffer order; sorted later

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(rec);
      cupti_spans.push_back({k->start, k->end});
    }
  free(buffer);
}

struct Launch {
  int kernel;
  cudaEvent_t before, after;
  unsigned long long *stamps; // device pointer into a slab
};

const char *kNames[] = {"wait2us", "wait10us", "wait50us", "add2^20"};

} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  CHECK(cuptiActivityRegisterCallbacks(cupti_buffer_requested, completed));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const int n = 1 << 20;
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, n * 4));
  CHECK(cudaMalloc(&b, n * 4));
  CHECK(cudaMalloc(&c, n * 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int per_regime = rounds * 4;
  unsigned long long *stamps;
  CHECK(cudaMalloc(&stamps, 3 * per_regime * 2 * sizeof(unsigned long long)));
  std::vector<unsigned long long> init(3 * per_regime * 2);
  for (size_t i = 0; i < init.size(); ++i)
    init[i] = i % 2 ? 0 : ~0ull;
  CHECK(cudaMemcpy(stamps, init.data(), init.size() * 8, cudaMemcpyHostToDevice));
  unsigned long long *spin_stamps;
  CHECK(cudaMalloc(&spin_stamps, 16));
  for (int i = 0; i < 50; ++i) // warm-up, its records dropped below
    wait_ns<<<1, 32, 0, s>>>(1000, spin_stamps);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  cupti_spans.clear();

  cudaEvent_t anchor;
  CHECK(cudaEventCreate(&anchor));
  CHECK(cudaEventRecord(anchor, s));
  std::vector<Launch> launches;
  const char *regimes[] = {"queued", "idle", "gaps"};
  for (int r = 0; r < 3; ++r) {
    if (r == 0) // launches far ahead: a 5 ms kernel first
      wait_ns<<<1, 32, 0, s>>>(5000000, spin_stamps);
    for (int i = 0; i < per_regime; ++i) {
      Launch l;
      l.kernel = i % 4;
      l.stamps = stamps + 2 * (r * per_regime + i);
      CHECK(cudaEventCreate(&l.before));
      CHECK(cudaEventCreate(&l.after));
      CHECK(cudaEventRecord(l.before, s));
      if (l.kernel < 3)
        wait_ns<<<4, 128, 0, s>>>(l.kernel == 0 ? 2000 : l.kernel == 1 ? 10000 : 50000, l.stamps);
      else
        add<<<n / 256, 256, 0, s>>>(a, b, c, n, l.stamps);
      CHECK(cudaEventRecord(l.after, s));
      launches.push_back(l);
      if (r == 1)
        CHECK(cudaStreamSynchronize(s));
      if (r == 2) {
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
      }
    }
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::sort(cupti_spans.begin(), cupti_spans.end(),
            [](const Span &x, const Span &y) { return x.start < y.start; });
  cupti_spans.erase(cupti_spans.begin()); // the 5 ms kernel
  std::printf("cupti records %zu, launches %zu\n", cupti_spans.size(), launches.size());
  if (cupti_spans.size() != launches.size())
    return 1;
  std::vector<unsigned long long> got(init.size());
  CHECK(cudaMemcpy(got.data(), stamps, got.size() * 8, cudaMemcpyDeviceToHost));

  // The anchor's CUPTI time: unknown directly; take the first launch's 'before' event as it,
  // with the offset that makes the first queued launch's start agree, then look at the drift.
  std::printf("%-7s %-9s %9s %9s %9s %9s %9s %9s %9s\n", "regime", "kernel", "cupti_us", "event_us",
              "mean_d", "worst_d", "kern_us", "startlag", "endlag");
  double abs_worst = 0, abs_first = NAN;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k) {
      double cu = 0, ev = 0, d = 0, worst = 0, kern = 0, startlag = 0, endlag = 0;
      int cnt = 0;
      for (int i = r * per_regime; i < (r + 1) * per_regime; ++i) {
        if (launches[i].kernel != k)
          continue;
        float ms = 0, ms_before = 0, ms_after = 0;
        CHECK(cudaEventElapsedTime(&ms, launches[i].before, launches[i].after));
        CHECK(cudaEventElapsedTime(&ms_before, anchor, launches[i].before));
        CHECK(cudaEventElapsedTime(&ms_after, anchor, launches[i].after));
        const Span &sp = cupti_spans[i];
        double cu_us = (sp.end - sp.start) / 1e3, ev_us = ms * 1e3;
        cu += cu_us;
        ev += ev_us;
        d += ev_us - cu_us;
        worst = std::max(worst, std::fabs(ev_us - cu_us));
        kern += (got[2 * i + 1] - got[2 * i]) / 1e3;
        // absolute: anchor + elapsed vs CUPTI (ns); offset fixed at the first launch
        double before_ns = ms_before * 1e6, after_ns = ms_after * 1e6;
        if (std::isnan(abs_first))
          abs_first = sp.start - before_ns;
        startlag += (sp.start - (abs_first + before_ns)) / 1e3;
        endlag += ((abs_first + after_ns) - sp.end) / 1e3;
        abs_worst = std::max(abs_worst, std::fabs((abs_first + after_ns) - sp.end) / 1e3);
        ++cnt;
      }
      std::printf("%-7s %-9s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", regimes[r], kNames[k],
                  cu / cnt, ev / cnt, d / cnt, worst, kern / cnt, startlag / cnt, endlag / cnt);
    }
  std::printf("absolute: after-event vs CUPTI end, worst %.2f us (one anchor)\n", abs_worst);

  // Host cost of the pair: 20000 tiny launches queued behind nothing.
  CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  for (int mode = 0; mode < 3; ++mode) {
    const int m = 20000;
    std::vector<cudaEvent_t> evs(mode ? 2 * m : 0);
    for (auto &e : evs)
      CHECK(cudaEventCreateWithFlags(&e, mode == 1 ? cudaEventDefault : cudaEventDisableTiming));
    CHECK(cudaStreamSynchronize(s));
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < m; ++i) {
      if (mode)
        CHECK(cudaEventRecord(evs[2 * i], s));
      wait_ns<<<1, 32, 0, s>>>(0, spin_stamps);
      if (mode)
        CHECK(cudaEventRecord(evs[2 * i + 1], s));
    }
    double host = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                      .count() / m;
    CHECK(cudaStreamSynchronize(s));
    double all = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                     .count() / m;
    std::printf("cost %-14s host %.3f us/launch, until done %.3f us/launch\n",
                mode == 0 ? "plain" : mode == 1 ? "timing-events" : "plain-events", host, all);
    for (auto &e : evs)
      CHECK(cudaEventDestroy(e));
  }
  return 0;
}
