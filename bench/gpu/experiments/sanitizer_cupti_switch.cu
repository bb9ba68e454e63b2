// Experiment for issue 25: can one process hand the CUDA callback slot from the Compute Sanitizer
// (gpubt's agent: launch callbacks, patches) to CUPTI's kernel activity (exact per-launch GPU
// times) and back, as an attach session that only times launches would need? With the Sanitizer
// subscribed, CUPTI's activity API refuses to start (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
// 39: run_cupti_toggle.sh under the dormant agent).
//
// Usage: sanitizer_cupti_switch LAUNCHES
// Phases of LAUNCHES tiny launches: (1) Sanitizer subscribed, LAUNCH_BEGIN counted; (2) Sanitizer
// unsubscribed, CUPTI activity on: records counted; (3) CUPTI off (flushed, and finalized when
// FINALIZE=1), Sanitizer subscribed again: LAUNCH_BEGIN counted; (4) CUPTI on once more.
// ORDER=cupti-first: CUPTI's activity first (no Sanitizer yet), then off (and finalized with
// FINALIZE=1) and the Sanitizer subscribed: does it see launches then? (A dormant agent that
// timed launches with CUPTI until an attach needs the Sanitizer would rely on that.)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <sanitizer.h>

#include "experiment.cuh"

#define CHECK_RET(x)                                                                                   \
  do {                                                                                             \
    auto r_ = (x);                                                                                 \
    if (r_ != 0) {                                                                                 \
      std::printf("FAILED %s: %d\n", #x, int(r_));                                                 \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

__global__ void tiny(float *x) { x[threadIdx.x] += 1.0f; }

namespace {

long launch_callbacks = 0, records = 0;

void SANITIZERAPI on_sanitizer(void *, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                               const void *) {
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN)
    ++launch_callbacks;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    records += rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  free(buffer);
}

Sanitizer_SubscriberHandle sub;

int subscribe() {
  CHECK_RET(sanitizerSubscribe(&sub, on_sanitizer, nullptr));
  CHECK_RET(sanitizerEnableDomain(1, sub, SANITIZER_CB_DOMAIN_LAUNCH));
  return 0;
}

int launches(float *x, int n, const char *phase) {
  long cb = launch_callbacks, rec = records;
  for (int i = 0; i < n; ++i)
    tiny<<<1, 256>>>(x);
  CHECK_RET(cudaDeviceSynchronize());
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf("%-34s sanitizer LAUNCH_BEGIN %ld, cupti records %ld (of %d)\n", phase,
              launch_callbacks - cb, records - rec, n);
  return 0;
}

int cupti_on() {
  CUptiResult r = cuptiActivityRegisterCallbacks(cupti_buffer_requested, completed);
  if (r == CUPTI_SUCCESS)
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::printf("cupti on: %d\n", int(r));
  return 0;
}

int cupti_off(bool finalize) {
  CHECK_RET(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CHECK_RET(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  if (finalize)
    std::printf("cuptiFinalize: %d\n", int(cuptiFinalize()));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  bool finalize = getenv("FINALIZE") && std::strcmp(getenv("FINALIZE"), "1") == 0;
  if (getenv("ORDER") && std::strcmp(getenv("ORDER"), "cupti-first") == 0) {
    float *x;
    CHECK_RET(cudaMalloc(&x, 1024 * sizeof(float)));
    cupti_on();
    launches(x, n, "A cupti first");
    cupti_off(finalize);
    std::printf("sanitizer subscribe: %d\n", subscribe());
    launches(x, n, "B cupti off, sanitizer on");
    CHECK_RET(sanitizerUnsubscribe(sub));
    cupti_on();
    launches(x, n, "C sanitizer off, cupti on again");
    return 0;
  }
  if (subscribe())
    return 1;
  float *x;
  CHECK_RET(cudaMalloc(&x, 1024 * sizeof(float)));
  launches(x, n, "1 sanitizer");
  cupti_on();
  launches(x, n, "  cupti on beside the sanitizer");
  CHECK_RET(sanitizerUnsubscribe(sub));
  cupti_on();
  launches(x, n, "2 sanitizer off, cupti on");
  cupti_off(finalize);
  std::printf("sanitizer subscribe again: %d\n", subscribe());
  launches(x, n, "3 cupti off, sanitizer again");
  CHECK_RET(sanitizerUnsubscribe(sub));
  cupti_on();
  launches(x, n, "4 sanitizer off, cupti on again");
  return 0;
}
