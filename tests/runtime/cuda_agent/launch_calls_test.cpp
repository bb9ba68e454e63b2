// LaunchCalls (runtime/cuda_agent/launch_calls.h): kernel records get their launch call's start
// by correlation id, whichever comes first; a graph launch's call serves each of its kernel
// nodes; a kernel whose call never comes goes after a few sends with call_ns 0.
#include "runtime/cuda_agent/launch_calls.h"

#include <gtest/gtest.h>

namespace gpubt::agent {
namespace {

abi::FinishedLaunch kernel(uint32_t correlation) {
  abi::FinishedLaunch l;
  l.seq = correlation;
  l.start_ns = 1000 + correlation;
  return l;
}

TEST(LaunchCalls, KernelsGetTheirCallsStartWhicheverRecordComesFirst) {
  LaunchCalls calls;
  std::vector<abi::FinishedLaunch> out;
  calls.called(1, 100, false);
  calls.called(1, 150, false); // the driver call under the runtime's, same id: the earlier stays
  calls.finished(kernel(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].call_ns, 100u);

  calls.finished(kernel(2), out); // its call's record comes later
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(calls.held(), 1u);
  calls.called(2, 200, false);
  calls.settle(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].seq, 2u);
  EXPECT_EQ(out[1].call_ns, 200u);
  EXPECT_EQ(calls.held(), 0u);
}

TEST(LaunchCalls, AGraphLaunchsCallServesEachKernelNode) {
  LaunchCalls calls;
  std::vector<abi::FinishedLaunch> out;
  calls.called(7, 700, true);
  for (int i = 0; i < 3; ++i)
    calls.finished(kernel(7), out);
  ASSERT_EQ(out.size(), 3u);
  for (const auto &l : out)
    EXPECT_EQ(l.call_ns, 700u);
  // A plain launch's call serves one kernel: a second record with its id waits, then goes
  // without a call.
  calls.called(8, 800, false);
  calls.finished(kernel(8), out);
  calls.finished(kernel(8), out);
  EXPECT_EQ(out.size(), 4u);
  for (int send = 0; send < LaunchCalls::kHeldSends; ++send) {
    calls.settle(out);
    EXPECT_EQ(out.size(), 4u);
  }
  calls.settle(out);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[4].call_ns, 0u);
}

TEST(LaunchCalls, TheOldestUnmatchedCallsGoBeyondTheLimit) {
  LaunchCalls calls;
  std::vector<abi::FinishedLaunch> out;
  for (uint32_t id = 1; id <= LaunchCalls::kMaxCalls + 1; ++id)
    calls.called(id, id, false); // none matched (failed launches)
  calls.finished(kernel(LaunchCalls::kMaxCalls + 1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].call_ns, LaunchCalls::kMaxCalls + 1);
  calls.finished(kernel(1), out); // the first aged out
  EXPECT_EQ(out.size(), 1u);
  calls.finished(kernel(2), out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(LaunchCalls, DrainedAtTheStopEveryHeldLaunchGoesAndTheCallsAreForgotten) {
  LaunchCalls calls;
  std::vector<abi::FinishedLaunch> out;
  calls.called(3, 300, true);
  calls.finished(kernel(4), out);
  calls.called(4, 400, false);
  calls.finished(kernel(5), out);
  calls.drain(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].call_ns, 400u);
  EXPECT_EQ(out[1].call_ns, 0u);
  EXPECT_EQ(calls.held(), 0u);
  calls.finished(kernel(3), out); // the next start's launches: the old graph call is gone
  EXPECT_EQ(calls.held(), 1u);
}

} // namespace
} // namespace gpubt::agent
