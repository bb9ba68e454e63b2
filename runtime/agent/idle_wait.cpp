#include "runtime/agent/idle_wait.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/agent/agent_thread.h"
#include "runtime/agent/driver_api.h"

namespace gpubt::agent {
namespace {

thread_local bool g_on_idle_thread = false;

struct Waiting {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

void synchronize(const std::vector<CUcontext> &contexts, const std::shared_ptr<Waiting> &w) {
  g_on_idle_thread = true;
  become_agent_thread("idle");
  for (CUcontext ctx : contexts) {
    if (GPUBT_DRIVER(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS)
      continue;
    GPUBT_DRIVER(cuCtxSynchronize)();
    CUcontext popped = nullptr;
    GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
  }
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->done = true;
  }
  w->cv.notify_all();
}

} // namespace

bool wait_for_idle(const std::vector<CUcontext> &contexts, std::chrono::milliseconds limit) {
  auto w = std::make_shared<Waiting>();
  try {
    std::thread(synchronize, contexts, w).detach();
  } catch (const std::system_error &) {
    return false; // no thread: not known to be idle
  }
  std::unique_lock<std::mutex> lock(w->mu);
  return w->cv.wait_for(lock, limit, [&] { return w->done; });
}

bool on_idle_thread() { return g_on_idle_thread; }

} // namespace gpubt::agent
