// Frames on the agent socket read by a peer that may be hostile (issue 23 S2): sizes capped by
// frame type before anything is allocated, and one deadline for the whole frame.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "runtime/abi/agent_control.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::abi {
namespace {

struct Pair {
  runtime::UniqueFd a, b;
  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a = runtime::UniqueFd(sv[0]);
    b = runtime::UniqueFd(sv[1]);
  }
};

void send_header(int fd, uint32_t type, uint64_t size) {
  struct {
    uint32_t type, pad;
    uint64_t size;
  } h{type, 0, size};
  ASSERT_EQ(write(fd, &h, sizeof h), ssize_t(sizeof h));
}

TEST(AgentControl, FramesRoundTrip) {
  Pair p;
  ASSERT_TRUE(send_frame(p.a.get(), Frame::Log, "a line", {}, 1000));
  auto f = recv_frame(p.b.get(), 1000);
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->type, Frame::Log);
  EXPECT_EQ(f->bytes, "a line");
}

TEST(AgentControl, OversizedHeaderIsRefusedByType) {
  Pair p;
  send_header(p.a.get(), uint32_t(Frame::Refused), (uint64_t(1) << 31) - 1);
  auto f = recv_frame(p.b.get(), 1000);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().find("more than a frame of its type may carry"), std::string::npos)
      << f.error();
  // The same size is within what Results may carry: it is read (and here times out, the bytes
  // never coming) without allocating them up front.
  Pair q;
  send_header(q.a.get(), uint32_t(Frame::Results), uint64_t(1) << 29);
  auto g = recv_frame(q.b.get(), 200);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error(), "timed out");
  EXPECT_EQ(max_frame_bytes(Frame::Detach), 0u);
  EXPECT_LT(max_frame_bytes(Frame::Log), max_frame_bytes(Frame::Events));
}

TEST(AgentControl, UnknownFrameTypeIsRefused) {
  Pair p;
  send_header(p.a.get(), 99, 0);
  auto f = recv_frame(p.b.get(), 1000);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().find("malformed"), std::string::npos);
}

TEST(AgentControl, OneDeadlineForTheWholeFrame) {
  // A byte every 100 ms keeps each poll short, but the frame as a whole must arrive in time.
  Pair p;
  send_header(p.a.get(), uint32_t(Frame::Log), 20);
  std::thread drip([fd = p.a.get()] {
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (write(fd, "x", 1) != 1)
        return;
    }
  });
  auto f = recv_frame(p.b.get(), 500); // the 20 bytes take 2 s
  drip.join();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), "timed out");
}

TEST(AgentControl, SendGivesUpOnAPeerThatDoesNotRead) {
  Pair p;
  std::string big(8 << 20, 'x'); // more than the socket buffers hold
  auto st = send_frame(p.a.get(), Frame::Events, big, {}, 300);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("timed out"), std::string::npos) << st.error();
}

} // namespace
} // namespace gpubt::abi
