#include "runtime/cuda_agent/launch_timer.h"

#include <cstdlib>
#include <ctime>
#include <dlfcn.h>
#include <unistd.h>
#include <string_view>
#include <utility>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

namespace gpubt::agent {
namespace {

constexpr size_t kBufferBytes = 4 << 20;
// Launches kept while gpubt does not read (a send blocked): beyond them, only counted as lost.
constexpr size_t kMaxPending = 1 << 20;

// The CUPTI functions the timer calls, from the libcupti it found.
struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  // Optional: the launch calls' own records (launch_calls.h); without them, CUPTI's queued
  // timestamps (costlier); without those too, every launch's launch_call is 0.
  decltype(&cuptiActivityEnableRuntimeApi) runtime_api = nullptr;
  decltype(&cuptiActivityEnableDriverApi) driver_api = nullptr;
  decltype(&cuptiActivityEnableLatencyTimestamps) latency_timestamps = nullptr;
  // Optional: the callback API, whose enter callbacks of the launch calls time them where the
  // calls' records do not come (CUPTI started in a running job).
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
};

// The calls that launch kernels, whose records give launch_call (graph: a CUDA graph's launch).
struct LaunchApi {
  CUpti_CallbackId cbid;
  bool graph;
};
constexpr LaunchApi kRuntimeLaunches[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, false},
    {CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, false},
    {CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000, false},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, true},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, true},
};
constexpr LaunchApi kDriverLaunches[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunch, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid, false},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync, false},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, true},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, true},
};

// RUNTIME: a runtime API's cbid, else a driver API's.
bool graph_launch(bool runtime, CUpti_CallbackId cbid) {
  auto in = [&](const auto &list) {
    for (const LaunchApi &l : list)
      if (l.cbid == cbid)
        return l.graph;
    return false;
  };
  return runtime ? in(kRuntimeLaunches) : in(kDriverLaunches);
}

Cupti g_cupti;
LaunchTimer *g_timer = nullptr;

// Records of the launch calls alone, on or off: whether CUPTI has the per-call switches.
bool record_launch_calls(bool on) {
  if (!g_cupti.runtime_api || !g_cupti.driver_api)
    return false;
  bool ok = true;
  for (const LaunchApi &l : kRuntimeLaunches)
    ok = g_cupti.runtime_api(l.cbid, on ? 1 : 0) == CUPTI_SUCCESS && ok;
  for (const LaunchApi &l : kDriverLaunches)
    ok = g_cupti.driver_api(l.cbid, on ? 1 : 0) == CUPTI_SUCCESS && ok;
  return ok;
}

uint64_t CUPTIAPI monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The callback API's handle while the launch calls' enter callbacks are on.
CUpti_SubscriberHandle g_subscriber = nullptr;

void CUPTIAPI launch_called(void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data) {
  const auto *call = static_cast<const CUpti_CallbackData *>(data);
  if (call->callbackSite == CUPTI_API_ENTER && g_timer)
    g_timer->called(call->correlationId, monotonic_ns(),
                    graph_launch(domain == CUPTI_CB_DOMAIN_RUNTIME_API, cbid));
}

// The launch calls' enter callbacks, on or off. On fails where the callback API is missing or
// another subscriber holds it (CUPTI allows one: the process's profiler, if it runs).
bool call_launch_callbacks(bool on) {
  if (!on) {
    if (g_subscriber)
      g_cupti.unsubscribe(g_subscriber);
    g_subscriber = nullptr;
    return true;
  }
  if (!g_cupti.subscribe || !g_cupti.unsubscribe || !g_cupti.enable_callback ||
      g_cupti.subscribe(&g_subscriber, launch_called, nullptr) != CUPTI_SUCCESS) {
    g_subscriber = nullptr;
    return false;
  }
  bool ok = true;
  for (const LaunchApi &l : kRuntimeLaunches)
    ok = g_cupti.enable_callback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, l.cbid) ==
             CUPTI_SUCCESS && ok;
  for (const LaunchApi &l : kDriverLaunches)
    ok = g_cupti.enable_callback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, l.cbid) ==
             CUPTI_SUCCESS && ok;
  if (!ok)
    call_launch_callbacks(false);
  return ok;
}

// The process's own libcupti first (two in one process would fight), then ours to choose.
void *open_cupti() {
  for (const char *name : {"libcupti.so.13", "libcupti.so"})
    if (void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD))
      return h;
  const char *env = std::getenv("GPUBT_CUPTI_PATH");
  for (const char *path : {env, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                           "/usr/local/cuda/lib64/libcupti.so.13", "libcupti.so.13", "libcupti.so"})
    if (path && *path)
      if (void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL))
        return h;
  return nullptr;
}

std::string load_cupti() {
  void *h = open_cupti();
  if (!h)
    return "no libcupti found (set GPUBT_CUPTI_PATH)";
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    return fn != nullptr;
  };
  Cupti c;
  if (!get(c.register_callbacks, "cuptiActivityRegisterCallbacks") ||
      !get(c.register_timestamp, "cuptiActivityRegisterTimestampCallback") ||
      !get(c.enable, "cuptiActivityEnable") || !get(c.disable, "cuptiActivityDisable") ||
      !get(c.flush_all, "cuptiActivityFlushAll") ||
      !get(c.next_record, "cuptiActivityGetNextRecord") ||
      !get(c.result_string, "cuptiGetResultString"))
    return "libcupti lacks the activity API gpubt uses (older than CUDA 12?)";
  get(c.runtime_api, "cuptiActivityEnableRuntimeApi");
  get(c.driver_api, "cuptiActivityEnableDriverApi");
  get(c.latency_timestamps, "cuptiActivityEnableLatencyTimestamps");
  get(c.subscribe, "cuptiSubscribe");
  get(c.unsubscribe, "cuptiUnsubscribe");
  get(c.enable_callback, "cuptiEnableCallback");
  g_cupti = c;
  return "";
}

std::string cupti_error(const char *what, CUptiResult r) {
  const char *text = nullptr;
  if (g_cupti.result_string)
    g_cupti.result_string(r, &text);
  return std::string(what) + " failed: " + (text ? text : std::to_string(int(r)));
}

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  if (g_timer && buffer)
    g_timer->take_buffer(buffer, valid);
  std::free(buffer);
}

// Once a process: libcupti found and its timestamps made CLOCK_MONOTONIC (before any kind is
// enabled: every record's times are then that clock).
std::string set_up_cupti() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    if (error = load_cupti(); !error.empty())
      return;
    if (CUptiResult r = g_cupti.register_timestamp(monotonic_ns); r != CUPTI_SUCCESS)
      error = cupti_error("cuptiActivityRegisterTimestampCallback", r);
  });
  return error;
}

// GPUBT_LAUNCH_CALL_TIMES names another source of launch_call (a test of each; a way around
// one that misbehaves): CALLS where it names none or no probe reads launch_call.
LaunchTimer::CallTimes chosen_call_times(LaunchTimer::CallTimes calls) {
  using C = LaunchTimer::CallTimes;
  const char *env = std::getenv("GPUBT_LAUNCH_CALL_TIMES");
  if (!env || calls == C::None)
    return calls;
  std::string_view name = env;
  return name == "records" ? C::FromCallRecords
         : name == "callbacks" ? C::FromCallbacks
         : name == "queued"    ? C::Queued
                               : calls;
}

} // namespace

std::string LaunchTimer::start(std::chrono::milliseconds period, Send send, CallTimes calls) {
  g_timer = this;
  calls = chosen_call_times(calls);
  if (std::string e = set_up_cupti(); !e.empty())
    return e;
  // Each start: the process's own profiler (the PyTorch profiler's CUPTI) may have taken the
  // buffers for itself since the last one.
  if (CUptiResult r = g_cupti.register_callbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS)
    return cupti_error("cuptiActivityRegisterCallbacks", r);
  // launch_call, only where a probe reads it: the start of the launch call, from its own record
  // (launch_calls.h) or its enter callback, else each kernel record's `queued` (the launch
  // entering the command buffer, inside the launch call: about 1.2 us more a launch on the
  // H200), else 0.
  calls_from_ = CallTimes::None;
  {
    std::lock_guard<std::mutex> lock(called_mu_);
    called_.clear(); // calls whose callbacks ran after the last stop: none of their kernels comes
  }
  if (calls == CallTimes::FromCallRecords) {
    if (record_launch_calls(true))
      calls_from_ = calls;
    else
      record_launch_calls(false); // some switches refused: none stays on
  } else if (calls == CallTimes::FromCallbacks && call_launch_callbacks(true)) {
    calls_from_ = calls;
  }
  bool queued = calls != CallTimes::None && calls_from_ == CallTimes::None;
  if (g_cupti.latency_timestamps) {
    g_cupti.latency_timestamps(queued ? 1 : 0);
    if (queued)
      calls_from_ = CallTimes::Queued;
  }
  if (CUptiResult r = g_cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS)
    return cupti_error("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
  {
    std::lock_guard<std::mutex> lock(mu_);
    send_ = std::move(send);
    pending_.pid = uint32_t(getpid());
    active_ = true;
  }
  sender_.start(period, "timer", [this] {
    g_cupti.flush_all(0); // completed buffers come back through take_buffer
    return send_taken();
  });
  return "";
}

void LaunchTimer::take_buffer(uint8_t *buffer, size_t valid) {
  std::lock_guard<std::mutex> lock(mu_);
  take_called(); // each launch's call came before its kernel's record
  CUpti_Activity *record = nullptr;
  while (g_cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      const auto *api = reinterpret_cast<const CUpti_ActivityAPI *>(record);
      if (calls_from_ == CallTimes::FromCallRecords)
        calls_.called(api->correlationId, api->start,
                      graph_launch(api->kind == CUPTI_ACTIVITY_KIND_RUNTIME, api->cbid));
      continue;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    // The fields read here lead every CUpti_ActivityKernelN: a newer libcupti's longer record
    // keeps them where they are (`queued` too, there since CUpti_ActivityKernel4).
    if (pending_.launches.size() + calls_.held() >= kMaxPending) {
      ++pending_.lost;
      continue;
    }
    const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
    abi::FinishedLaunch l;
    l.seq = k->correlationId;
    l.stream = k->streamId;
    l.start_ns = k->start;
    l.end_ns = k->end;
    l.grid[0] = uint32_t(k->gridX), l.grid[1] = uint32_t(k->gridY), l.grid[2] = uint32_t(k->gridZ);
    l.block[0] = uint32_t(k->blockX), l.block[1] = uint32_t(k->blockY),
    l.block[2] = uint32_t(k->blockZ);
    l.device = k->deviceId;
    l.kernel = k->name ? k->name : "";
    if (matches_calls()) {
      calls_.finished(std::move(l), pending_.launches);
    } else {
      l.call_ns = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued; // unknown: 0
      pending_.launches.push_back(std::move(l));
    }
  }
}

const char *LaunchTimer::describe(CallTimes calls) {
  switch (calls) {
  case CallTimes::FromCallRecords: return "launch calls timed by their CUPTI records";
  case CallTimes::FromCallbacks: return "launch calls timed by their CUPTI enter callbacks";
  case CallTimes::Queued: return "launch calls timed by CUPTI's queued timestamps";
  case CallTimes::None: break;
  }
  return "launch calls not timed";
}

void LaunchTimer::called(uint32_t correlation, uint64_t start_ns, bool graph) {
  std::lock_guard<std::mutex> lock(called_mu_);
  if (called_.size() < LaunchCalls::kMaxCalls)
    called_.push_back({correlation, start_ns, graph});
}

void LaunchTimer::take_called() {
  std::vector<Called> taken;
  {
    std::lock_guard<std::mutex> lock(called_mu_);
    taken.swap(called_);
  }
  for (const Called &c : taken)
    calls_.called(c.correlation, c.start_ns, c.graph);
}

bool LaunchTimer::send_taken() {
  abi::FinishedLaunches batch;
  Send send;
  {
    std::lock_guard<std::mutex> lock(mu_);
    take_called();
    calls_.settle(pending_.launches);
    if (pending_.launches.empty() && !pending_.lost)
      return true;
    batch.pid = pending_.pid;
    batch.launches.swap(pending_.launches);
    std::swap(batch.lost, pending_.lost);
    send = send_;
  }
  return send(abi::finished_launches_record(batch));
}

void LaunchTimer::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_)
      return;
    active_ = false;
  }
  sender_.stop();
  g_cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (calls_from_ == CallTimes::FromCallRecords)
    record_launch_calls(false);
  if (calls_from_ == CallTimes::FromCallbacks)
    call_launch_callbacks(false);
  g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> lock(mu_);
    take_called();
    calls_.drain(pending_.launches); // no call record comes after the flush
  }
  send_taken();
}

} // namespace gpubt::agent
