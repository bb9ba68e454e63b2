// How far a long attach or detach is (see progress.h).
#include "runtime/bpf/progress.h"

#include <algorithm>
#include <ctime>

namespace gpubt::runtime {
namespace {

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

} // namespace

Progress::Progress(std::ostream *out, std::string verb, uint64_t after_ns, uint64_t period_ns,
                   Clock now)
    : out_(out), verb_(std::move(verb)), after_ns_(after_ns),
      period_ns_(std::max<uint64_t>(period_ns, 1)),
      now_(now ? std::move(now) : Clock(monotonic_ns)), next_ns_(now_() + after_ns_) {}

void Progress::expect(size_t n) { expected_ += n; }

void Progress::done(size_t n) {
  done_ += n;
  expected_ = std::max(expected_, done_);
  if (!out_)
    return;
  uint64_t t = now_();
  if (t < next_ns_)
    return;
  line();
  next_ns_ = t + period_ns_;
}

void Progress::finish() {
  if (out_ && printed_)
    line();
  printed_ = false;
}

void Progress::line() {
  *out_ << "gpubt: " << verb_ << " " << expected_ << " probes... " << done_ << " done" << std::endl;
  printed_ = true;
}

} // namespace gpubt::runtime
