// The dormant agent's socket: frames, blobs and where it listens (see agent_control.h).
#include "runtime/abi/agent_control.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::abi {
namespace {

constexpr size_t kMaxFds = 64;
constexpr uint64_t kMaxFrame = uint64_t(1) << 31;

struct Header {
  uint32_t type;
  uint32_t pad;
  uint64_t size;
};

Status send_all(int socket, const char *data, size_t size) {
  while (size) {
    ssize_t n = send(socket, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return make_error(std::string("sending to the agent socket failed: ") + strerror(errno));
    data += n;
    size -= size_t(n);
  }
  return Ok{};
}

// Reads SIZE bytes; fds that come along are appended to FDS.
Status recv_all(int socket, char *data, size_t size, int timeout_ms, std::vector<int> *fds) {
  while (size) {
    pollfd p{socket, POLLIN, 0};
    int r = poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0)
      return make_error("timed out");
    iovec io{data, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
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

Status send_frame(int socket, Frame type, const std::string &bytes, const std::vector<int> &fds) {
  if (fds.size() > kMaxFds)
    return make_error("too many file descriptors for one frame");
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
  ssize_t n;
  do
    n = sendmsg(socket, &m, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return make_error(std::string("sending to the agent socket failed: ") + strerror(errno));
  if (size_t(n) < sizeof h)
    if (auto st = send_all(socket, reinterpret_cast<const char *>(&h) + n, sizeof h - n); !st)
      return st;
  return send_all(socket, bytes.data(), bytes.size());
}

Result<ControlFrame> recv_frame(int socket, int timeout_ms) {
  Header h{};
  ControlFrame f;
  if (auto st = recv_all(socket, reinterpret_cast<char *>(&h), sizeof h, timeout_ms, &f.fds); !st)
    return make_error(st.error());
  if (h.size > kMaxFrame || h.type < uint32_t(Frame::Attach) || h.type > uint32_t(Frame::Log))
    return make_error("a malformed frame on the agent socket");
  f.type = Frame(h.type);
  f.bytes.resize(h.size);
  if (auto st = recv_all(socket, f.bytes.data(), f.bytes.size(), timeout_ms, nullptr); !st)
    return make_error(st.error());
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

std::string agent_dir(uid_t uid) {
  if (const char *dir = std::getenv("GPUBT_AGENT_DIR"); dir && *dir)
    return dir;
  return "/tmp/gpubt-agent-" + std::to_string(uid);
}

Status make_private_dir(const std::string &dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error("cannot make " + dir + ": " + strerror(errno));
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0)
    return make_error("cannot stat " + dir + ": " + strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
    return make_error(dir + " is not a folder of this user's that only it may write to");
  return Ok{};
}

std::vector<AgentSocket> find_agent_sockets(pid_t pid) {
  std::vector<std::string> dirs;
  if (const char *dir = std::getenv("GPUBT_AGENT_DIR"); dir && *dir) {
    dirs.push_back(dir);
  } else if (DIR *tmp = opendir("/tmp")) {
    while (dirent *e = readdir(tmp))
      if (std::strncmp(e->d_name, "gpubt-agent-", 12) == 0)
        dirs.push_back(std::string("/tmp/") + e->d_name);
    closedir(tmp);
  }
  std::vector<AgentSocket> found;
  for (const auto &dir : dirs) {
    struct stat ds;
    DIR *d = opendir(dir.c_str());
    if (!d)
      continue;
    if (fstat(dirfd(d), &ds) != 0) {
      closedir(d);
      continue;
    }
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      size_t dot = name.find(".sock");
      if (dot == std::string::npos || dot + 5 != name.size() || dot == 0 ||
          name.find_first_not_of("0123456789") != dot)
        continue;
      pid_t p = pid_t(std::atol(name.c_str()));
      if (pid > 0 && p != pid)
        continue;
      found.push_back({p, ds.st_uid, dir + "/" + name});
    }
    closedir(d);
  }
  return found;
}

} // namespace gpubt::abi
