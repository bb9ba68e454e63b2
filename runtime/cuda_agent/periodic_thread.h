// A thread of the agent that does one step every period until stopped (the launch watch's and the
// launch timer's senders). Stopping never holds the program long: a step blocked in a send to a
// gpubt that stopped reading is left behind (its thread ends once the send does) after LIMIT.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace gpubt::agent {

class PeriodicThread {
public:
  // STEP: false once there is nothing more to do (gpubt gone): the thread ends.
  using Step = std::function<bool()>;
  PeriodicThread() = default;
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread &) = delete;
  PeriodicThread &operator=(const PeriodicThread &) = delete;

  // A thread named gpubt-ROLE (agent_thread.h) running STEP every PERIOD from one period on.
  void start(std::chrono::milliseconds period, const char *role, Step step);
  // No step starts after it; waits at most LIMIT for one running.
  void stop(std::chrono::milliseconds limit = std::chrono::seconds(1));

private:
  struct Run { // one start()'s: a thread left behind keeps its own
    std::mutex mu;
    std::condition_variable cv;
    bool over = false, ended = false;
  };
  std::shared_ptr<Run> run_;
  std::thread thread_;
};

} // namespace gpubt::agent
