#include "runtime/cuda_agent/idle_wait.h"

#include <thread>

#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {

void StreamSet::created(CUcontext ctx, CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_[ctx].insert(stream);
}

void StreamSet::destroyed(CUcontext ctx, CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = streams_.find(ctx); it != streams_.end())
    it->second.erase(stream);
}

void StreamSet::context_destroyed(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(ctx);
}

bool StreamSet::idle(CUcontext ctx) {
  auto busy = [](CUstream s) { return GPUBT_DRIVER(cuStreamQuery)(s) == CUDA_ERROR_NOT_READY; };
  if (busy(CU_STREAM_LEGACY))
    return false;
  if (auto it = streams_.find(ctx); it != streams_.end())
    for (CUstream s : it->second)
      if (busy(s))
        return false;
  return true;
}

bool StreamSet::wait_for_idle(CUcontext ctx, std::chrono::milliseconds limit) {
  if (GPUBT_DRIVER(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
    return false;
  auto deadline = std::chrono::steady_clock::now() + limit;
  auto pause = std::chrono::microseconds(20);
  bool done;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done = idle(ctx);
    }
    if (done || std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  CUcontext popped = nullptr;
  GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
  return done;
}

} // namespace gpubt::agent
