// The GPU clock model: offset from the newest measurement, drift from one a second or more
// older, and nsecs computed exactly as the probes compute it.
#include <gtest/gtest.h>

#include "runtime/cuda_agent/clock_model.h"

using gpubt::agent::ClockModel;
using gpubt::agent::ClockSample;
using gpubt::agent::fit_clock;

namespace {

// A GPU clock 1.2 ms behind the host's and losing 20 us per second (the H100's, measured).
ClockSample sample(int64_t host_ns) {
  int64_t gpu = host_ns - 1200000 - host_ns / 50000; // -20 ppm
  return {uint64_t(gpu), host_ns, 3000};
}

TEST(ClockModel, OneSampleGivesTheOffset) {
  std::deque<ClockSample> s = {sample(5000000000)};
  ClockModel m = fit_clock(s);
  EXPECT_EQ(m.rate_q32, 0);
  EXPECT_EQ(m.at(s[0].globaltimer), 5000000000);
}

TEST(ClockModel, DriftComesFromASecondOrMoreBack) {
  std::deque<ClockSample> s = {sample(1000000000), sample(1500000000)};
  EXPECT_EQ(fit_clock(s).rate_q32, 0) << "half a second is too short a base";
  s.push_back(sample(3000000000));
  ClockModel m = fit_clock(s);
  // 20 ppm in Q32 (the host gains 20 ns per GPU ms).
  EXPECT_NEAR(double(m.rate_q32) / 4294967296.0, 20e-6, 0.05e-6);
  // Extrapolated 10 s past the last measurement, still within a microsecond.
  int64_t later = 13000000000;
  EXPECT_NEAR(double(m.at(sample(later).globaltimer)), double(later), 1000.0);
  // Without the drift it would be 200 us off.
  ClockModel flat = m;
  flat.rate_q32 = 0;
  EXPECT_GT(std::abs(flat.at(sample(later).globaltimer) - later), 190000);
}

TEST(ClockModel, NegativeDriftAndTimesBeforeTheBase) {
  ClockModel m{-1000, -int64_t(1) << 20, 1000000000}; // -244 ppm
  EXPECT_EQ(m.at(1000000000), 1000000000 - 1000);
  EXPECT_EQ(m.at(1000000000 + 4096), 1000000000 + 4096 - 1000 - 1);
  EXPECT_EQ(m.at(1000000000 - 4096), 1000000000 - 4096 - 1000 + 1);
}

TEST(ClockModel, MeasuredEvery100msUntilTheDriftIsKnown) {
  using std::chrono::milliseconds;
  std::deque<ClockSample> s = {sample(1000000000)};
  EXPECT_EQ(gpubt::agent::next_measurement(s), milliseconds(100));
  for (int64_t t = 1100000000; t < 2000000000; t += 100000000) {
    s.push_back(sample(t));
    EXPECT_EQ(gpubt::agent::next_measurement(s), milliseconds(100)) << t;
    EXPECT_EQ(fit_clock(s).rate_q32, 0);
  }
  s.push_back(sample(2000000000)); // the GPU clock is slower: its span is under a second yet
  s.push_back(sample(2100000000));
  EXPECT_EQ(gpubt::agent::next_measurement(s), milliseconds(1000));
  EXPECT_NE(fit_clock(s).rate_q32, 0);
}

TEST(ClockModel, ASampleWithASlowRoundTripIsSkippedUpToThreeTimes) {
  using gpubt::agent::usable_sample;
  std::deque<ClockSample> s;
  ClockSample slow = sample(2000000000);
  slow.bracket_ns = 12000;
  EXPECT_TRUE(usable_sample(s, slow, 0)) << "the first sample is all there is";
  for (int64_t t = 1000000000; t < 1500000000; t += 100000000)
    s.push_back(sample(t)); // round trips of 3 us
  EXPECT_FALSE(usable_sample(s, slow, 0));
  EXPECT_FALSE(usable_sample(s, slow, 2));
  EXPECT_TRUE(usable_sample(s, slow, 3)) << "then the link may just be slower now";
  slow.bracket_ns = 7000; // twice the median and a microsecond
  EXPECT_TRUE(usable_sample(s, slow, 0));
}

} // namespace
