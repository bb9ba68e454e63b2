// Progress lines of a long attach or detach, on a clock the test moves.
#include "runtime/bpf/progress.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace gpubt::runtime;

namespace {

constexpr uint64_t kSecond = 1'000'000'000;

struct Fixture {
  std::ostringstream out;
  uint64_t now = 100 * kSecond;
  Progress progress{&out, "attaching", 2 * kSecond, 2 * kSecond, [this] { return now; }};
};

} // namespace

TEST(Progress, SilentBeforeTheThresholdAndNothingAtTheEnd) {
  Fixture f;
  f.progress.expect(10);
  f.now += kSecond;
  f.progress.done(10);
  f.progress.finish();
  EXPECT_EQ(f.out.str(), "");
}

TEST(Progress, ALineAfterTheThresholdThenEveryPeriodThenAtTheEnd) {
  Fixture f;
  f.progress.expect(312);
  f.now += 2 * kSecond; // the threshold
  f.progress.done(120);
  f.now += kSecond; // within the period: no line
  f.progress.done(10);
  f.now += kSecond;
  f.progress.done(10);
  f.progress.expect(8); // a later wildcard's matches
  f.progress.done(180);
  f.progress.finish();
  EXPECT_EQ(f.out.str(), "gpubt: attaching 312 probes... 120 done\n"
                         "gpubt: attaching 312 probes... 140 done\n"
                         "gpubt: attaching 320 probes... 320 done\n");
}

TEST(Progress, DoneWithoutExpectCountsBoth) {
  Fixture f;
  f.now += 5 * kSecond;
  f.progress.done(3);
  EXPECT_EQ(f.out.str(), "gpubt: attaching 3 probes... 3 done\n");
}

TEST(Progress, NoStreamNoLines) {
  uint64_t now = 0;
  Progress p(nullptr, "detaching", 0, 1, [&] { return now; });
  p.expect(5);
  now = 10 * kSecond;
  p.done(5);
  p.finish();
  EXPECT_EQ(p.done_count(), 5u);
}
