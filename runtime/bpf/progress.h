// A long attach or detach says how far it is. Hundreds of tracepoints take seconds: the 360 of
// `tracepoint:syscalls:sys_enter_*` detach in 14 s here (each waits for an RCU grace period
// under the kernel's event lock, so closing them from many threads does not help). Once AFTER
// has passed since the start, a line
//   gpubt: attaching N probes... M done
// goes to OUT, again every PERIOD, and once more at the end if any went before. N is what is
// known so far: a wildcard counts all its matches once it is expanded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace gpubt::runtime {

class Progress {
public:
  using Clock = std::function<uint64_t()>; // ns, monotonic
  static constexpr uint64_t kAfterNs = 2'000'000'000, kPeriodNs = 2'000'000'000;

  // OUT null: silent (-q). VERB: "attaching", "detaching". The clock starts now.
  Progress(std::ostream *out, std::string verb, uint64_t after_ns = kAfterNs,
           uint64_t period_ns = kPeriodNs, Clock now = {});

  void expect(size_t n); // N more are coming
  void done(size_t n);   // N more are done (each expected before, or now)
  void finish();         // the end: the last line, if a line went out before

  size_t done_count() const { return done_; }

private:
  void line();

  std::ostream *out_;
  std::string verb_;
  uint64_t after_ns_, period_ns_;
  Clock now_;
  uint64_t next_ns_;
  size_t expected_ = 0, done_ = 0;
  bool printed_ = false;
};

} // namespace gpubt::runtime
