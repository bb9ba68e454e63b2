// Offset from the newest pair; drift from the oldest pair at least kDriftBaseNs older, so that
// a few microseconds of measuring error make a small drift error.
#include "runtime/cuda_agent/clock_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpubt::agent {
namespace {

constexpr int64_t kDriftBaseNs = 1000000000;

constexpr std::chrono::milliseconds kUntilDriftKnown(100), kOnceDriftKnown(1000);
constexpr size_t kRecent = 16;       // samples whose round trips make the median
constexpr int64_t kSlackNs = 1000;   // a round trip may exceed twice the median by this
constexpr int kMaxSkipped = 3;

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

bool usable_sample(const std::deque<ClockSample> &kept, const ClockSample &sample, int skipped) {
  if (kept.empty() || skipped >= kMaxSkipped)
    return true;
  std::vector<int64_t> brackets;
  for (size_t i = kept.size() - std::min(kept.size(), kRecent); i < kept.size(); ++i)
    brackets.push_back(kept[i].bracket_ns);
  std::nth_element(brackets.begin(), brackets.begin() + brackets.size() / 2, brackets.end());
  return sample.bracket_ns <= 2 * brackets[brackets.size() / 2] + kSlackNs;
}

std::chrono::milliseconds next_measurement(const std::deque<ClockSample> &samples) {
  bool spans_base = samples.size() > 1 &&
                    int64_t(samples.back().globaltimer - samples.front().globaltimer) >= kDriftBaseNs;
  return spans_base ? kOnceDriftKnown : kUntilDriftKnown;
}

} // namespace gpubt::agent
