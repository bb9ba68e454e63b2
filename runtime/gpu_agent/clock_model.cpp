// Offset from the newest pair; drift from the oldest pair at least kDriftBaseNs older, so that
// a few microseconds of measuring error make a small drift error.
#include "runtime/gpu_agent/clock_model.h"

#include <cmath>

namespace gpubt::agent {
namespace {

constexpr int64_t kDriftBaseNs = 1000000000;

constexpr std::chrono::milliseconds kUntilDriftKnown(100), kOnceDriftKnown(1000);

} // namespace

int64_t ClockModel::at(uint64_t t) const {
  return int64_t(t) + offset_ns + ((int64_t(t - base) * rate_q32) >> 32);
}

ClockModel fit_clock(const std::deque<ClockSample> &samples) {
  const ClockSample &now = samples.back();
  ClockModel m;
  m.base = now.globaltimer;
  m.offset_ns = now.host_ns - int64_t(now.globaltimer);
  for (const ClockSample &old : samples) { // the oldest far enough back
    int64_t span = int64_t(now.globaltimer - old.globaltimer);
    if (span < kDriftBaseNs)
      break;
    double drift = double((now.host_ns - int64_t(now.globaltimer)) -
                          (old.host_ns - int64_t(old.globaltimer))) /
                   double(span);
    m.rate_q32 = std::llround(drift * 4294967296.0);
    break;
  }
  return m;
}

std::chrono::milliseconds next_measurement(const std::deque<ClockSample> &samples) {
  bool spans_base = samples.size() > 1 &&
                    int64_t(samples.back().globaltimer - samples.front().globaltimer) >= kDriftBaseNs;
  return spans_base ? kOnceDriftKnown : kUntilDriftKnown;
}

} // namespace gpubt::agent
