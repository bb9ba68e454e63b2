#include "runtime/cuda_agent/periodic_thread.h"

#include <utility>

#include "runtime/cuda_agent/agent_thread.h"

namespace gpubt::agent {

void PeriodicThread::start(std::chrono::milliseconds period, const char *role, Step step) {
  stop();
  run_ = std::make_shared<Run>();
  thread_ = std::thread([run = run_, period, role, step = std::move(step)] {
    become_agent_thread(role);
    std::unique_lock<std::mutex> lock(run->mu);
    while (!run->cv.wait_for(lock, period, [&] { return run->over; })) {
      lock.unlock();
      bool more = step();
      lock.lock();
      if (!more)
        break;
    }
    run->ended = true;
    run->cv.notify_all();
  });
}

void PeriodicThread::stop(std::chrono::milliseconds limit) {
  if (!run_)
    return;
  bool ended;
  {
    std::unique_lock<std::mutex> lock(run_->mu);
    run_->over = true;
    run_->cv.notify_all();
    ended = run_->cv.wait_for(lock, limit, [&] { return run_->ended; });
  }
  if (ended)
    thread_.join();
  else
    thread_.detach(); // blocked in a send to a gpubt that stopped reading
  run_.reset();
}

} // namespace gpubt::agent
