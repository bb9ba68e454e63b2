// The measuring kernel polls a request word in mapped host memory and answers each request with
// %globaltimer; the host brackets each round trip with CLOCK_MONOTONIC and keeps the narrowest.
#include "runtime/cuda_agent/gpu_clock.h"

#include <atomic>
#include <cstring>
#include <ctime>

#include <sanitizer.h>

#include "runtime/cuda_agent/agent_thread.h"
#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {
namespace {

constexpr uint32_t kRounds = 8;
constexpr uint64_t kAbort = ~0ull;
constexpr std::chrono::milliseconds kForgetWait(250), kStopWait(500);
constexpr size_t kKeep = 128;           // samples kept per context

// gpubt_clock(u64 *shared, u32 rounds): for r = 1..rounds, wait until shared[0] >= r, then
// shared[r] = %globaltimer. Leaves on kAbort or after half a second without a request.
const char *kClockPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry gpubt_clock(.param .u64 shared, .param .u32 rounds)
{
  .reg .pred %p<4>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [shared];
  ld.param.u32 %r1, [rounds];
  mov.u64 %rd2, %globaltimer;
  mov.u32 %r2, 1;
$next:
  setp.gt.u32 %p1, %r2, %r1;
  @%p1 bra $done;
  cvt.u64.u32 %rd4, %r2;
$wait:
  ld.volatile.u64 %rd3, [%rd1];
  setp.eq.u64 %p2, %rd3, -1;
  @%p2 bra $done;
  setp.ge.u64 %p3, %rd3, %rd4;
  @%p3 bra $answer;
  mov.u64 %rd5, %globaltimer;
  sub.u64 %rd6, %rd5, %rd2;
  setp.gt.u64 %p1, %rd6, 500000000;
  @%p1 bra $done;
  bra $wait;
$answer:
  mov.u64 %rd7, %globaltimer;
  shl.b64 %rd8, %rd4, 3;
  add.u64 %rd9, %rd1, %rd8;
  st.volatile.u64 [%rd9], %rd7;
  membar.sys;
  add.u32 %r2, %r2, 1;
  mov.u64 %rd2, %rd7;
  bra $next;
$done:
  ret;
}
)";

int64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

thread_local bool g_on_service_thread = false;

std::string failed(const char *what, CUresult r) {
  const char *name = nullptr;
  GPUBT_DRIVER(cuGetErrorName)(r, &name);
  return std::string(what) + " failed (" + (name ? name : std::to_string(int(r))) + ")";
}

} // namespace

Result<std::unique_ptr<ClockProbe>> ClockProbe::create(CUcontext ctx) {
  auto p = std::make_unique<ClockProbe>();
  CUresult r = GPUBT_DRIVER(cuModuleLoadData)(&p->module_, kClockPtx);
  if (r != CUDA_SUCCESS)
    return make_error(failed("loading the clock kernel", r));
  if ((r = GPUBT_DRIVER(cuModuleGetFunction)(&p->function_, p->module_, "gpubt_clock")) !=
      CUDA_SUCCESS)
    return make_error(failed("cuModuleGetFunction", r));
  if ((r = GPUBT_DRIVER(cuStreamCreate)(&p->stream_, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
    return make_error(failed("cuStreamCreate", r));
  void *host = nullptr;
  if ((r = GPUBT_DRIVER(cuMemHostAlloc)(&host, 8 * (kRounds + 1),
                                        CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)) !=
      CUDA_SUCCESS)
    return make_error(failed("cuMemHostAlloc", r));
  p->shared_ = static_cast<volatile uint64_t *>(host);
  if ((r = GPUBT_DRIVER(cuMemHostGetDevicePointer)(&p->device_shared_, host, 0)) != CUDA_SUCCESS)
    return make_error(failed("cuMemHostGetDevicePointer", r));
  return p;
}

Result<ClockSample> ClockProbe::measure() {
  if (GPUBT_DRIVER(cuStreamQuery)(stream_) != CUDA_SUCCESS)
    return make_error("the previous measurement is still running");
  for (uint32_t i = 0; i <= kRounds; ++i)
    shared_[i] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t rounds = kRounds;
  void *args[] = {&device_shared_, &rounds};
  CUresult r = GPUBT_DRIVER(cuLaunchKernel)(function_, 1, 1, 1, 1, 1, 1, 0, stream_, args, nullptr);
  if (r != CUDA_SUCCESS)
    return make_error(failed("launching the clock kernel", r));
  std::optional<ClockSample> best;
  for (uint32_t round = 1; round <= kRounds; ++round) {
    // The first answer waits for the kernel to start (on a busy GPU, behind other work).
    int64_t t0 = monotonic_ns(), give_up = t0 + (round == 1 ? 200000000 : 2000000);
    shared_[0] = round;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint64_t t;
    while (!(t = shared_[round]))
      if (monotonic_ns() > give_up) {
        shared_[0] = kAbort;
        return make_error("the clock kernel did not answer (the GPU may be busy)");
      }
    int64_t t1 = monotonic_ns();
    if (!best || t1 - t0 < best->bracket_ns)
      best = ClockSample{t, t0 + (t1 - t0) / 2, t1 - t0};
  }
  return *best;
}

ClockService::ClockService(Publish publish)
    : publish_(std::move(publish)), thread_([this] { run(); }) {}

ClockService::~ClockService() {
  std::unique_lock<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
  // At exit the driver may be torn down under a measurement that then never returns: the
  // thread is left to the process's end rather than waited for.
  if (cv_.wait_for(lock, kStopWait, [&] { return finished_; })) {
    lock.unlock();
    thread_.join();
  } else {
    thread_.detach();
  }
}

bool ClockService::on_service_thread() { return g_on_service_thread; }

void ClockService::watch(CUcontext ctx) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (forgotten_.count(ctx))
      rewatched_.insert(ctx);
    else
      watched_[ctx].due = std::chrono::steady_clock::now();
  }
  cv_.notify_all();
}

void ClockService::forget(CUcontext ctx) {
  std::unique_lock<std::mutex> lock(mu_);
  // A measurement of CTX under way may be blocked in a driver call that waits for the context's
  // destruction, which waits for this: after kForgetWait it is left to end on its own (run()
  // drops the context then).
  if (cv_.wait_for(lock, kForgetWait, [&] { return busy_ != ctx; }))
    watched_.erase(ctx);
  else
    forgotten_.insert(ctx);
}

std::optional<ClockModel> ClockService::model(CUcontext ctx, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] {
    auto it = watched_.find(ctx);
    return it == watched_.end() || it->second.model || it->second.failed;
  };
  cv_.wait_for(lock, wait, ready);
  auto it = watched_.find(ctx);
  return it == watched_.end() ? std::nullopt : it->second.model;
}

void ClockService::run() {
  g_on_service_thread = true;
  become_agent_thread("clock");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    CUcontext next = nullptr;
    auto due = std::chrono::steady_clock::time_point::max();
    for (auto &[ctx, w] : watched_)
      if (!w.failed && w.due < due) {
        due = w.due;
        next = ctx;
      }
    if (!next) {
      cv_.wait(lock);
      continue;
    }
    if (due > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, due);
      continue;
    }
    busy_ = next;
    Watched &w = watched_[next];
    lock.unlock();
    measure(next, w);
    lock.lock();
    busy_ = nullptr;
    if (forgotten_.erase(next)) {
      watched_.erase(next);
      if (rewatched_.erase(next)) // a new context got the old one's handle meanwhile
        watched_[next].due = std::chrono::steady_clock::now();
    }
    cv_.notify_all();
  }
  finished_ = true;
  cv_.notify_all();
}

// Runs without mu_ (but with busy_ set, so W stays); takes it to store what it found.
void ClockService::measure(CUcontext ctx, Watched &w) {
  if (GPUBT_DRIVER(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
    return;
  std::string error;
  std::optional<ClockModel> model;
  if (!w.probe) {
    auto probe = ClockProbe::create(ctx);
    if (probe)
      w.probe = std::move(*probe);
    else
      error = probe.error();
  }
  if (w.probe) {
    auto sample = w.probe->measure();
    if (!sample)
      error = sample.error();
    std::lock_guard<std::mutex> lock(mu_);
    bool skip = sample && !usable_sample(w.samples, *sample, w.skipped);
    w.skipped = skip ? w.skipped + 1 : 0;
    if (sample && !skip) {
      w.samples.push_back(*sample);
      if (w.samples.size() > kKeep)
        w.samples.pop_front();
      model = w.model = fit_clock(w.samples);
    }
    w.due = std::chrono::steady_clock::now() +
            (skip ? std::chrono::milliseconds(100) : next_measurement(w.samples));
    w.failed = !w.model && !sample; // never measured, and this try failed too
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    w.failed = true;
  }
  cv_.notify_all();
  if (model)
    publish_(ctx, &*model, "", w.probe.get());
  else if (w.failed) // a later failure keeps the last model
    publish_(ctx, nullptr, error, nullptr);
  CUcontext popped;
  GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
}

} // namespace gpubt::agent
