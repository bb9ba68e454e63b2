// GPU time on the host's clock. %globaltimer is not CLOCK_REALTIME to the microsecond: on the
// H100 it ran 0.4-2 ms apart from it and drifted 8-23 us/s. So the agent measures it against
// CLOCK_MONOTONIC in each CUDA context, from a thread of its own: a one-thread kernel answers
// host requests with %globaltimer through mapped host memory (a ~3 us round trip), and the
// measurements give probes an offset and a drift rate: refreshed every 100 ms until a second of
// measurements gives the drift, then every second.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>

#include "runtime/abi/result.h"
#include "runtime/cuda_agent/clock_model.h"
#include "runtime/cuda_agent/stream_writes.h"

namespace gpubt::agent {

// One context's measuring kernel, its stream and mapped memory (made with the context current).
class ClockProbe {
public:
  static Result<std::unique_ptr<ClockProbe>> create(CUcontext ctx);
  Result<ClockSample> measure(); // the narrowest of a few round trips
  // WRITES on the probe's own (non-blocking) stream: one command, so kernels never see half a
  // model, and no Compute Sanitizer call (the program's launch callbacks wait for those).
  Status write(StreamWrites &writes) { return writes.issue(stream_); }

private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUstream stream_ = nullptr;
  volatile uint64_t *shared_ = nullptr; // [0] request, [1..] answers
  CUdeviceptr device_shared_ = 0;
};

// Measures every watched context at once and then on next_measurement's schedule, and hands each new model to
// PUBLISH, on its own thread, with the context current and the probe to write with; or, when a
// context cannot be measured at all, a null model and why.
class ClockService {
public:
  using Publish = std::function<void(CUcontext, const ClockModel *, const std::string &error,
                                     ClockProbe *)>;
  explicit ClockService(Publish publish);
  ~ClockService(); // stops the thread

  void watch(CUcontext ctx);
  void forget(CUcontext ctx); // waits (a while) if the context is being measured
  // The context's model, waiting up to WAIT for its first measurement; nullopt if none.
  std::optional<ClockModel> model(CUcontext ctx, std::chrono::milliseconds wait);
  // True on the service's thread: the agent's callbacks ignore the driver calls made there.
  static bool on_service_thread();

private:
  struct Watched {
    std::unique_ptr<ClockProbe> probe;
    std::deque<ClockSample> samples;
    std::optional<ClockModel> model;
    int skipped = 0; // samples not used in a row (usable_sample)
    std::chrono::steady_clock::time_point due;
    bool failed = false;
  };
  void run();
  void measure(CUcontext ctx, Watched &w);

  Publish publish_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<CUcontext, Watched> watched_;
  CUcontext busy_ = nullptr; // being measured (outside mu_)
  std::set<CUcontext> forgotten_, rewatched_; // destroyed while busy_; made again meanwhile
  bool finished_ = false;                      // the thread is done
  bool stop_ = false;
  std::thread thread_;
};

} // namespace gpubt::agent
