// The dormant agent's socket: frames and blobs (see agent_control.h).
#include "runtime/abi/agent_control.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpubt::abi {
namespace {

constexpr size_t kMaxFds = 64;
constexpr size_t kReadChunk = size_t(1) << 20; // a frame's buffer grows by this as bytes come

struct Header {
  uint32_t type;
  uint32_t pad;
  uint64_t size;
};

using Clock = std::chrono::steady_clock;

// TIMEOUT_MS from now; nullopt: no limit.
std::optional<Clock::time_point> deadline_in(int timeout_ms) {
  if (timeout_ms < 0)
    return std::nullopt;
  return Clock::now() + std::chrono::milliseconds(timeout_ms);
}

// Waits until SOCKET is ready for EVENTS or DEADLINE passes (error "timed out").
Status wait_ready(int socket, short events, const std::optional<Clock::time_point> &deadline) {
  for (;;) {
    int ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0)
        return make_error("timed out");
      ms = int(std::min<int64_t>(left.count(), INT32_MAX));
    }
    pollfd p{socket, events, 0};
    int r = poll(&p, 1, ms);
    if (r > 0)
      return Ok{};
    if (r < 0 && errno != EINTR)
      return make_error(std::string("poll: ") + strerror(errno));
  }
}

// Sends MESSAGE (its data and control) in full by DEADLINE; a partial send goes on with the
// data left, the control having gone with the first byte.
Status send_message(int socket, msghdr &m, const std::optional<Clock::time_point> &deadline) {
  while (m.msg_iov->iov_len) {
    ssize_t n = sendmsg(socket, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto st = wait_ready(socket, POLLOUT, deadline); !st)
        return make_error("sending to the agent socket failed: " + st.error());
      continue;
    }
    if (n <= 0)
      return make_error(std::string("sending to the agent socket failed: ") + strerror(errno));
    m.msg_iov->iov_base = static_cast<char *>(m.msg_iov->iov_base) + n;
    m.msg_iov->iov_len -= size_t(n);
    m.msg_control = nullptr;
    m.msg_controllen = 0;
  }
  return Ok{};
}

// Reads SIZE bytes by DEADLINE; fds that come along are appended to FDS.
Status recv_all(int socket, char *data, size_t size,
                const std::optional<Clock::time_point> &deadline, std::vector<int> *fds) {
  while (size) {
    if (auto st = wait_ready(socket, POLLIN, deadline); !st)
      return st;
    iovec io{data, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = recvmsg(socket, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
      continue;
    if (n == 0)
      return make_error("closed");
    if (n < 0)
      return make_error(std::string("reading the agent socket failed: ") + strerror(errno));
    for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const int *got = reinterpret_cast<const int *>(CMSG_DATA(c));
        for (size_t i = 0; i < count; ++i) {
          if (fds)
            fds->push_back(got[i]);
          else
            close(got[i]);
        }
      }
    data += n;
    size -= size_t(n);
  }
  return Ok{};
}

} // namespace

uint64_t max_frame_bytes(Frame type) {
  switch (type) {
  case Frame::Attach:  // the config and a cubin per GPU architecture
  case Frame::Results: // every device map of every context
    return uint64_t(1) << 30;
  case Frame::Events: // printf records drained after one launch
    return uint64_t(256) << 20;
  case Frame::Attached:
  case Frame::Refused:
  case Frame::Log:
    return uint64_t(1) << 20;
  case Frame::Detach:
    return 0;
  }
  return 0;
}

Status send_frame(int socket, Frame type, const std::string &bytes, const std::vector<int> &fds,
                  int timeout_ms) {
  if (fds.size() > kMaxFds)
    return make_error("too many file descriptors for one frame");
  auto deadline = deadline_in(timeout_ms);
  Header h{uint32_t(type), 0, bytes.size()};
  iovec io{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  if (!fds.empty()) { // the fds ride on the header's bytes
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  if (auto st = send_message(socket, m, deadline); !st)
    return st;
  iovec body{const_cast<char *>(bytes.data()), bytes.size()};
  msghdr b{};
  b.msg_iov = &body;
  b.msg_iovlen = 1;
  return send_message(socket, b, deadline);
}

Result<ControlFrame> recv_frame(int socket, int timeout_ms) {
  auto deadline = deadline_in(timeout_ms);
  Header h{};
  ControlFrame f;
  // The fds that came with a frame that is then refused are closed: a peer sending malformed
  // frames must not fill the reader's fd table.
  struct CloseOnError {
    ControlFrame &f;
    bool keep = false;
    ~CloseOnError() {
      if (!keep)
        for (int fd : f.fds)
          close(fd);
    }
  } guard{f};
  if (auto st = recv_all(socket, reinterpret_cast<char *>(&h), sizeof h, deadline, &f.fds); !st)
    return make_error(st.error());
  if (h.type < uint32_t(Frame::Attach) || h.type > uint32_t(Frame::Log))
    return make_error("a malformed frame on the agent socket (type " + std::to_string(h.type) +
                      ")");
  f.type = Frame(h.type);
  if (h.size > max_frame_bytes(f.type))
    return make_error("a malformed frame on the agent socket (" + std::to_string(h.size) +
                      " bytes, more than a frame of its type may carry)");
  while (f.bytes.size() < h.size) {
    size_t at = f.bytes.size();
    f.bytes.resize(at + std::min<uint64_t>(kReadChunk, h.size - at));
    if (auto st = recv_all(socket, f.bytes.data() + at, f.bytes.size() - at, deadline, nullptr);
        !st)
      return make_error(st.error());
  }
  guard.keep = true;
  return f;
}

std::string pack_blobs(const std::vector<std::string> &blobs) {
  std::string out;
  for (const auto &b : blobs) {
    uint64_t n = b.size();
    out.append(reinterpret_cast<const char *>(&n), sizeof n);
    out += b;
  }
  return out;
}

Result<std::vector<std::string>> unpack_blobs(const std::string &bytes) {
  std::vector<std::string> blobs;
  for (size_t at = 0; at < bytes.size();) {
    uint64_t n = 0;
    if (bytes.size() - at < sizeof n)
      return make_error("a truncated blob");
    std::memcpy(&n, bytes.data() + at, sizeof n);
    at += sizeof n;
    if (n > bytes.size() - at)
      return make_error("a truncated blob");
    blobs.push_back(bytes.substr(at, n));
    at += n;
  }
  return blobs;
}

} // namespace gpubt::abi
