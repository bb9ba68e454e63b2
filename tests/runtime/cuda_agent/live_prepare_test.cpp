// Which live-copy preparations a launch waits for (runtime/cuda_agent/live_prepare.h): a -c
// context's first launch waits for the copier's thread to prepare it, at most the queue's wait,
// and one not begun by then is dropped, so the copier never loads its module under the
// program's kernels. Real threads; every outcome is decided by the order the test imposes, not
// by timing (the waits that must time out have nothing that could end them sooner).
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "runtime/cuda_agent/live_prepare.h"

using gpubt::agent::PrepareQueue;
using namespace std::chrono_literals;

namespace {

int a_ctx, b_ctx; // their addresses stand for two CUcontexts
void *const A = &a_ctx, *const B = &b_ctx;

TEST(PrepareQueue, ALaunchInAContextNeverAskedDoesNotWait) {
  PrepareQueue q(1h);
  EXPECT_TRUE(q.await(A));
  q.ask(B);
  EXPECT_TRUE(q.await(A)); // another context's preparation is not this one's
}

TEST(PrepareQueue, TheFirstLaunchWaitsForThePreparationUnderWay) {
  PrepareQueue q(1h);
  q.ask(A);
  ASSERT_EQ(q.begin(), A);
  auto launch = std::async(std::launch::async, [&] { return q.await(A); });
  EXPECT_EQ(launch.wait_for(50ms), std::future_status::timeout); // still preparing
  EXPECT_TRUE(q.end(A));
  EXPECT_TRUE(launch.get());
  EXPECT_EQ(q.begin(), nullptr);
  EXPECT_TRUE(q.await(A)); // the next launches do not wait
}

TEST(PrepareQueue, OneNotBegunByTheWaitIsDroppedAndNeverBegins) {
  PrepareQueue q(20ms);
  q.ask(A);
  EXPECT_FALSE(q.await(A));      // the copier's thread never came: too late from here on
  EXPECT_EQ(q.begin(), nullptr); // so it never loads its module under the program's kernels
  EXPECT_TRUE(q.await(A));
}

TEST(PrepareQueue, OneUnderWayAtTheWaitIsLeftToEnd) {
  PrepareQueue q(20ms);
  q.ask(A);
  ASSERT_EQ(q.begin(), A);
  EXPECT_FALSE(q.await(A)); // the launch goes on without it
  EXPECT_TRUE(q.end(A));    // and what it made is kept
  EXPECT_TRUE(q.await(A));
}

TEST(PrepareQueue, ContextsAreBegunOneAtATimeInAnyOrder) {
  PrepareQueue q(1h);
  q.ask(A);
  q.ask(B);
  void *first = q.begin(), *second = q.begin();
  EXPECT_NE(first, nullptr);
  EXPECT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(q.begin(), nullptr);
  EXPECT_TRUE(q.end(first));
  EXPECT_TRUE(q.end(second));
}

TEST(PrepareQueue, ADestroyedContextAskedIsDroppedAndFreesItsLaunches) {
  PrepareQueue q(1h);
  q.ask(A);
  auto launch = std::async(std::launch::async, [&] { return q.await(A); });
  EXPECT_EQ(launch.wait_for(50ms), std::future_status::timeout);
  q.forget(A, 1h);
  EXPECT_TRUE(launch.get());
  EXPECT_EQ(q.begin(), nullptr);
}

TEST(PrepareQueue, ADestroyedContextUnderWayIsWaitedForThenReportedForgotten) {
  PrepareQueue q(1h);
  q.ask(A);
  ASSERT_EQ(q.begin(), A);
  auto destroy = std::async(std::launch::async, [&] { q.forget(A, 1h); });
  EXPECT_EQ(destroy.wait_for(50ms), std::future_status::timeout); // waits for the preparation
  EXPECT_TRUE(q.end(A)); // ended in time: what it made is the context's, gone with it
  destroy.get();
  // Its driver calls stuck until the destruction: the destruction goes on, and the preparation
  // is told that its handle may now be a new context's.
  q.ask(B);
  ASSERT_EQ(q.begin(), B);
  q.forget(B, 20ms);
  EXPECT_TRUE(q.await(B)); // nothing to wait for: the context is gone
  EXPECT_FALSE(q.end(B));
}

TEST(PrepareQueue, TheCopiersEndDropsTheAskedOnly) {
  PrepareQueue q(1h);
  q.ask(A);
  q.ask(B);
  void *running = q.begin();
  q.drop_asked();
  EXPECT_TRUE(q.await(running == A ? B : A)); // dropped: no wait
  EXPECT_EQ(q.begin(), nullptr);
  EXPECT_TRUE(q.end(running));
}

} // namespace
