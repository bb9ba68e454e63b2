#include "runtime/cuda_agent/launch_timer.h"

#include <cstdlib>
#include <ctime>
#include <dlfcn.h>
#include <unistd.h>
#include <utility>

#include <cupti_activity.h>

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
  // Optional (CUDA 12.x): without it every launch's launch_call is 0.
  decltype(&cuptiActivityEnableLatencyTimestamps) latency_timestamps = nullptr;
};
Cupti g_cupti;
LaunchTimer *g_timer = nullptr;

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
  get(c.latency_timestamps, "cuptiActivityEnableLatencyTimestamps");
  g_cupti = c;
  return "";
}

std::string cupti_error(const char *what, CUptiResult r) {
  const char *text = nullptr;
  if (g_cupti.result_string)
    g_cupti.result_string(r, &text);
  return std::string(what) + " failed: " + (text ? text : std::to_string(int(r)));
}

uint64_t CUPTIAPI monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
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

} // namespace

std::string LaunchTimer::start(std::chrono::milliseconds period, Send send, bool calls) {
  g_timer = this;
  if (std::string e = set_up_cupti(); !e.empty())
    return e;
  // Each start: the process's own profiler (the PyTorch profiler's CUPTI) may have taken the
  // buffers for itself since the last one.
  if (CUptiResult r = g_cupti.register_callbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS)
    return cupti_error("cuptiActivityRegisterCallbacks", r);
  // Each kernel record's `queued` (launch_call): the launch entering the command buffer, inside
  // the host's launch call. Not had, it stays CUPTI_TIMESTAMP_UNKNOWN: launch_call is then 0.
  // Only where a probe reads it: collecting it costs every launch.
  if (g_cupti.latency_timestamps)
    g_cupti.latency_timestamps(calls ? 1 : 0);
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
  CUpti_Activity *record = nullptr;
  while (g_cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    // The fields read here lead every CUpti_ActivityKernelN: a newer libcupti's longer record
    // keeps them where they are (`queued` too, there since CUpti_ActivityKernel4).
    if (pending_.launches.size() >= kMaxPending) {
      ++pending_.lost;
      continue;
    }
    const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
    abi::FinishedLaunch l;
    l.seq = k->correlationId;
    l.stream = k->streamId;
    l.start_ns = k->start;
    l.end_ns = k->end;
    l.call_ns = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued; // unknown: 0, as documented
    l.grid[0] = uint32_t(k->gridX), l.grid[1] = uint32_t(k->gridY), l.grid[2] = uint32_t(k->gridZ);
    l.block[0] = uint32_t(k->blockX), l.block[1] = uint32_t(k->blockY),
    l.block[2] = uint32_t(k->blockZ);
    l.device = k->deviceId;
    l.kernel = k->name ? k->name : "";
    pending_.launches.push_back(std::move(l));
  }
}

bool LaunchTimer::send_taken() {
  abi::FinishedLaunches batch;
  Send send;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  send_taken();
}

} // namespace gpubt::agent
