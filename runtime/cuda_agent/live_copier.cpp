#include "runtime/cuda_agent/live_copier.h"

#include <utility>

#include "runtime/abi/live_maps.h"
#include "runtime/cuda_agent/agent_thread.h"
#include "runtime/cuda_agent/driver_api.h"

#include <sanitizer.h>

namespace gpubt::agent {
namespace {

thread_local bool g_on_copier_thread = false;

// How long forget() waits for a copy under way: a copy on the copier's own stream does not wait
// for kernels, so only a GPU in trouble makes it take this long.
constexpr std::chrono::seconds kCopyLimit{1};

} // namespace

LiveCopier::LiveCopier(std::chrono::milliseconds period, Collect collect, Send send,
                       Report report)
    : period_(period), collect_(std::move(collect)), send_(std::move(send)),
      report_(std::move(report)), thread_([this] { run(); }) {}

LiveCopier::~LiveCopier() {
  if (thread_.joinable())
    thread_.join();
}

bool LiveCopier::stop() {
  std::unique_lock<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
  return cv_.wait_for(lock, kCopyLimit, [&] { return finished_; });
}

void stop_copier(std::unique_ptr<LiveCopier> &copier) {
  if (copier && copier->stop())
    copier.reset();
  // Else its thread is stuck in a copy: the copier stays, so that forget() still keeps the
  // memory it copies from.
}

bool LiveCopier::on_copier_thread() { return g_on_copier_thread; }

void LiveCopier::begin_round(const std::vector<Source> &sources) {
  std::lock_guard<std::mutex> lock(mu_);
  copyable_.clear();
  for (const auto &s : sources)
    copyable_.insert(s.ctx);
}

bool LiveCopier::forget(CUcontext ctx, bool release) {
  std::unique_lock<std::mutex> lock(mu_);
  copyable_.erase(ctx);
  if (!cv_.wait_for(lock, kCopyLimit, [&] { return busy_ != ctx; }))
    return false;
  auto it = staging_.find(ctx);
  if (it == staging_.end())
    return true;
  if (release) {
    if (it->second.stream)
      GPUBT_DRIVER(cuStreamDestroy)(it->second.stream);
    if (it->second.host)
      GPUBT_DRIVER(cuMemFreeHost)(it->second.host);
  }
  staging_.erase(it);
  return true;
}

std::string LiveCopier::copy(const Source &s, Staging &st, abi::DeviceImage &image) {
  uint64_t total = 0;
  for (const auto &[address, size] : s.maps)
    total += size;
  if (!st.stream && GPUBT_DRIVER(cuStreamCreate)(&st.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return st.stream = nullptr, "cuStreamCreate";
  if (st.size < total) {
    if (st.host)
      GPUBT_DRIVER(cuMemFreeHost)(st.host);
    st.host = nullptr, st.size = 0;
    if (GPUBT_DRIVER(cuMemHostAlloc)(&st.host, total, 0) != CUDA_SUCCESS)
      return st.host = nullptr, "cuMemHostAlloc";
    st.size = total;
  }
  Sanitizer_StreamHandle stream = nullptr;
  if (SanitizerResult r = sanitizerGetStreamHandle(s.ctx, st.stream, &stream);
      r != SANITIZER_SUCCESS)
    return "sanitizerGetStreamHandle (error " + std::to_string(int(r)) + ")";
  auto *host = static_cast<uint8_t *>(st.host);
  uint64_t offset = 0;
  for (const auto &[address, size] : s.maps) { // each returns once its copy is done
    if (SanitizerResult r = sanitizerMemcpyDeviceToHost(host + offset,
                                                        reinterpret_cast<void *>(address), size,
                                                        stream);
        r != SANITIZER_SUCCESS)
      return "sanitizerMemcpyDeviceToHost (error " + std::to_string(int(r)) + ")";
    offset += size;
  }
  image.device = s.device;
  offset = 0;
  for (const auto &[address, size] : s.maps) {
    image.maps.emplace_back(host + offset, host + offset + size);
    offset += size;
  }
  return "";
}

void LiveCopier::run() {
  g_on_copier_thread = true;
  become_agent_thread("maps");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, period_, [&] { return stop_; });
    if (stop_)
      break;
    lock.unlock();
    abi::AgentResults round;
    std::vector<Source> sources = collect_(*this, round); // calls begin_round
    for (const Source &s : sources) {
      lock.lock();
      bool wanted = !stop_ && copyable_.count(s.ctx);
      busy_ = wanted ? s.ctx : nullptr;
      Staging *st = wanted ? &staging_[s.ctx] : nullptr; // forget() erases it only when not busy
      lock.unlock();
      if (!wanted)
        continue;
      abi::DeviceImage image;
      std::string failed = "cuCtxPushCurrent";
      if (GPUBT_DRIVER(cuCtxPushCurrent)(s.ctx) == CUDA_SUCCESS) {
        failed = copy(s, *st, image);
        CUcontext popped;
        GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
      }
      bool copied = failed.empty();
      lock.lock();
      busy_ = nullptr;
      cv_.notify_all();
      lock.unlock();
      if (!copied && !std::exchange(reported_, true)) // not busy: report may take the agent's lock
        report_("copying the GPU's maps while the program runs failed (" + failed +
                "): they show when it ends");
      if (copied)
        round.images.push_back(std::move(image));
    }
    bool sent = round.images.empty() || send_(abi::live_maps_record(getpid(), round));
    lock.lock();
    if (!sent)
      break; // gpubt is gone
  }
  finished_ = true;
  cv_.notify_all();
}

} // namespace gpubt::agent
