// The --metrics server for real, over TCP on 127.0.0.1 (issue 23 review): a storm of scrapes
// costs one render a second, not one each; at the open-file limit a waiting connection is
// turned away rather than left to make the server's poll loop spin, and the server serves again
// once descriptors are free.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/output/metrics_endpoint.h"
#include "tests/support/fd_limit_filler.h"

namespace gpubt::runtime {
namespace {

bool connect_loopback(int fd, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
}

// Reads FD until it closes or TIMEOUT_MS passes; nullopt on the timeout.
std::optional<std::string> read_all(int fd, int timeout_ms) {
  std::string got;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    end - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, int(left)) <= 0)
      return std::nullopt;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      return got;
    got.append(buf, size_t(n));
  }
}

std::string scrape(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  if (!connect_loopback(fd.get(), port) || send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size()))
    return "";
  return read_all(fd.get(), 10000).value_or("");
}

TEST(MetricsEndpoint, AStormOfScrapesSharesOneRenderASecond) {
  auto endpoint = MetricsEndpoint::listen_on("127.0.0.1:0");
  ASSERT_TRUE(endpoint) << endpoint.error();
  std::atomic<int> renders{0};
  (*endpoint)->serve([&] { return "gpubt_renders " + std::to_string(++renders) + "\n"; });
  auto t0 = std::chrono::steady_clock::now();
  constexpr int kScrapes = 100;
  int answered = 0;
  for (int i = 0; i < kScrapes; ++i)
    answered += scrape((*endpoint)->port()).find("200 OK") != std::string::npos;
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(answered, kScrapes);
  // One render when the storm starts and one for each second it lasted (a render per request
  // before: 100).
  EXPECT_LE(renders.load(), 2 + int(took)) << kScrapes << " scrapes in " << took << " s";
}

TEST(MetricsEndpoint, AtTheOpenFileLimitAWaitingClientIsTurnedAwayWithoutSpinning) {
  auto endpoint = MetricsEndpoint::listen_on("127.0.0.1:0");
  ASSERT_TRUE(endpoint) << endpoint.error();
  (*endpoint)->serve([] { return std::string("gpubt_up 1\n"); }, std::chrono::milliseconds(0));
  int port = (*endpoint)->port();
  UniqueFd waiting(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)); // made before the limit
  test::FdLimitFiller limit;
  ASSERT_TRUE(limit.ok());
  ASSERT_TRUE(connect_loopback(waiting.get(), port));
  double cpu0 = test::cpu_seconds();
  // Closed by the server: before, it stayed in the backlog while the server's thread spun.
  auto got = read_all(waiting.get(), 5000);
  usleep(500000); // what the server's thread does meanwhile: nothing
  double spent = test::cpu_seconds() - cpu0;
  limit.release();
  EXPECT_TRUE(got.has_value()) << "the client waiting at the limit was never answered or closed";
  EXPECT_LT(spent, 0.25) << "CPU seconds the process spent at the limit";
  // Descriptors free again: served as before.
  EXPECT_NE(scrape(port).find("gpubt_up 1"), std::string::npos);
}

} // namespace
} // namespace gpubt::runtime
