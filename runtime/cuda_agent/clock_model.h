// The agent's model of a GPU's %globaltimer against host CLOCK_MONOTONIC, fitted to measured
// pairs (gpu_clock.h measures them). Plain C++: tested without a GPU.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>

namespace gpubt::agent {

// nsecs = t + offset_ns + ((int64_t)(t - base) * rate_q32 >> 32), t = %globaltimer
// (the fields gpubt_device_ctx carries: clock_offset_ns, clock_rate, clock_base).
struct ClockModel {
  int64_t offset_ns = 0;
  int64_t rate_q32 = 0;
  uint64_t base = 0;
  int64_t at(uint64_t t) const;
};

struct ClockSample {
  uint64_t globaltimer = 0;
  int64_t host_ns = 0;    // CLOCK_MONOTONIC at the middle of the round trip
  int64_t bracket_ns = 0; // the round trip: the sample is good to half of it
};

// Offset from the newest sample, drift from the oldest one at least a second older (none yet:
// no drift). SAMPLES oldest first, not empty.
ClockModel fit_clock(const std::deque<ClockSample> &samples);

// Whether SAMPLE may become the newest (the offset comes from it alone): not when its round trip
// is over twice the recent ones' median (+1 us), a sign that every round trip was slowed (the host
// thread preempted, the bus busy) and its midpoint may be microseconds off; but after SKIPPED
// such samples in a row, it is (the link may just have become slower).
bool usable_sample(const std::deque<ClockSample> &kept, const ClockSample &sample, int skipped);

// How long until the next measurement: every 100 ms while the samples span less than the drift's
// base (the offset alone then goes stale at up to ~23 us/s), every second after.
std::chrono::milliseconds next_measurement(const std::deque<ClockSample> &samples);

} // namespace gpubt::agent
