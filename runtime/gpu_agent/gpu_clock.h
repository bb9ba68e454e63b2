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
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>

struct Sanitizer_Stream_st; // sanitizer.h's Sanitizer_StreamHandle points at one

#include "runtime/abi/result.h"
#include "runtime/gpu_agent/clock_model.h"

namespace gpubt::agent {

// One context's measuring kernel, its stream and mapped memory (made with the context current).
class ClockProbe {
public:
  static Result<std::unique_ptr<ClockProbe>> create(CUcontext ctx);
  Result<ClockSample> measure(); // the narrowest of a few round trips
  // Copies BYTES to device address DST through the probe's own (non-blocking) stream.
  bool write(uint64_t dst, const void *bytes, size_t size);

private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUstream stream_ = nullptr;
  volatile uint64_t *shared_ = nullptr; // [0] request, [1..] answers, then staging for write()
  CUdeviceptr device_shared_ = 0;
  ::Sanitizer_Stream_st *sanitizer_stream_ = nullptr; // stream_, for sanitizer copies
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
  void forget(CUcontext ctx); // waits while the context is being measured
  // The context's model, waiting up to WAIT for its first measurement; nullopt if none.
  std::optional<ClockModel> model(CUcontext ctx, std::chrono::milliseconds wait);
  // True on the service's thread: the agent's callbacks ignore the driver calls made there.
  static bool on_service_thread();

private:
  struct Watched {
    std::unique_ptr<ClockProbe> probe;
    std::deque<ClockSample> samples;
    std::optional<ClockModel> model;
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
  bool stop_ = false;
  std::thread thread_;
};

} // namespace gpubt::agent
