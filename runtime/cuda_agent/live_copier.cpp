#include "runtime/cuda_agent/live_copier.h"

#include <utility>

#include "runtime/abi/live_maps.h"
#include "runtime/cuda_agent/agent_thread.h"
#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {
namespace {

thread_local bool g_on_copier_thread = false;

// How long forget() waits for a copy under way: a copy on the copier's own stream does not wait
// for kernels, so only a GPU in trouble makes it take this long.
constexpr std::chrono::seconds kCopyLimit{1};

} // namespace

LiveCopier::LiveCopier(std::chrono::milliseconds period, Collect collect, Send send)
    : period_(period), collect_(std::move(collect)), send_(std::move(send)),
      thread_([this] { run(); }) {}

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
  if (copier && !copier->stop())
    (void)copier.release(); // its thread still uses it: it ends (or not) with the process
  copier.reset();
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

bool LiveCopier::copy(const Source &s, Staging &st, abi::DeviceImage &image) {
  uint64_t total = 0;
  for (const auto &[address, size] : s.maps)
    total += size;
  if (!st.stream && GPUBT_DRIVER(cuStreamCreate)(&st.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return st.stream = nullptr, false;
  if (st.size < total) {
    if (st.host)
      GPUBT_DRIVER(cuMemFreeHost)(st.host);
    st.host = nullptr, st.size = 0;
    if (GPUBT_DRIVER(cuMemHostAlloc)(&st.host, total, 0) != CUDA_SUCCESS)
      return st.host = nullptr, false;
    st.size = total;
  }
  auto *host = static_cast<uint8_t *>(st.host);
  uint64_t offset = 0;
  for (const auto &[address, size] : s.maps) {
    if (GPUBT_DRIVER(cuMemcpyDtoHAsync)(host + offset, address, size, st.stream) != CUDA_SUCCESS)
      return false;
    offset += size;
  }
  if (GPUBT_DRIVER(cuStreamSynchronize)(st.stream) != CUDA_SUCCESS)
    return false;
  image.device = s.device;
  offset = 0;
  for (const auto &[address, size] : s.maps) {
    image.maps.emplace_back(host + offset, host + offset + size);
    offset += size;
  }
  return true;
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
      bool copied = GPUBT_DRIVER(cuCtxPushCurrent)(s.ctx) == CUDA_SUCCESS;
      if (copied) {
        copied = copy(s, *st, image);
        CUcontext popped;
        GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
      }
      lock.lock();
      busy_ = nullptr;
      cv_.notify_all();
      lock.unlock();
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
