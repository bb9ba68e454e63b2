// The dormant agent's control socket (see control_server.h).
#include "runtime/cuda_agent/control_server.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::agent {

using abi::Frame;

namespace {
// Every frame the agent sends has this long: sends to gpubt happen on the program's own threads
// (printf records after a launch, -v lines) or under the lock they take, so a gpubt that stops
// reading (suspended with Ctrl-Z, stopped in a debugger) must not stop the program. Past it the
// session ends and the agent detaches by itself.
constexpr int kSendMs = 5000;
} // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::start(Handler handler,
                                                            const abi::AgentFolderRoots &roots) {
  auto chosen = abi::choose_agent_dir(roots);
  if (!chosen)
    return make_error(chosen.error());
  std::string dir = *chosen;
  std::unique_ptr<ControlServer> s(new ControlServer);
  s->handler_ = std::move(handler);
  s->path_ = dir + "/" + std::to_string(getpid()) + ".sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (s->path_.size() >= sizeof addr.sun_path)
    return make_error("the socket path " + s->path_ + " is too long");
  std::strcpy(addr.sun_path, s->path_.c_str());
  s->listen_ = runtime::UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  unlink(s->path_.c_str()); // a socket left by an earlier process of this pid
  mode_t old = umask(0177); // the socket is made 0600
  bool bound = s->listen_.valid() &&
               bind(s->listen_.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
  umask(old);
  if (!bound || listen(s->listen_.get(), 4) != 0)
    return make_error("cannot listen on " + s->path_ + ": " + strerror(errno));
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0)
    return make_error(std::string("pipe: ") + strerror(errno));
  s->wake_read_ = runtime::UniqueFd(wake[0]);
  s->wake_write_ = runtime::UniqueFd(wake[1]);
  s->thread_ = std::thread([p = s.get()] { p->loop(); });
  return s;
}

ControlServer::~ControlServer() {
  stop_ = true;
  if (wake_write_.valid())
    (void)!write(wake_write_.get(), "x", 1);
  if (thread_.joinable())
    thread_.join();
  unlink(path_.c_str());
}

std::string ControlServer::refusal(uid_t uid) const {
  return "permission denied: process " + std::to_string(getpid()) + " belongs to uid " +
         std::to_string(getuid()) + "; only root or that user may attach (you are uid " +
         std::to_string(uid) + ")";
}

void ControlServer::loop() {
  // Named so that host probes on the CUDA libraries skip this thread's calls (agent_protocol.h).
  pthread_setname_np(pthread_self(), (std::string(abi::kAgentThreadPrefix) + "control").c_str());
  while (!stop_) {
    pollfd p[2] = {{listen_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR)
      return;
    if (!(p[0].revents & POLLIN))
      continue;
    runtime::UniqueFd conn = accept_.accept(listen_.get(), SOCK_CLOEXEC);
    if (!conn.valid())
      continue;
    ucred peer{};
    socklen_t len = sizeof peer;
    if (getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
        (peer.uid != 0 && peer.uid != getuid())) {
      (void)abi::send_frame(conn.get(), Frame::Refused, refusal(peer.uid), {}, kSendMs);
      continue;
    }
    serve(std::move(conn), peer.pid);
  }
}

// One session: Attach, then Events until Detach or gpubt's end; others are refused meanwhile.
void ControlServer::serve(runtime::UniqueFd conn, pid_t peer) {
  auto attach = abi::recv_frame(conn.get(), 10000);
  if (!attach || attach->type != Frame::Attach) {
    if (attach)
      for (int fd : attach->fds)
        close(fd);
    return;
  }
  auto blobs = abi::unpack_blobs(attach->bytes);
  {
    std::lock_guard<std::mutex> lock(send_mu_); // Log lines may come while attaching
    session_ = conn.get();
  }
  auto said = blobs ? handler_.attach(std::move(*blobs), std::move(attach->fds))
                    : Result<std::string>(make_error(blobs.error()));
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    if (!said) {
      session_ = -1;
      (void)abi::send_frame(conn.get(), Frame::Refused, said.error(), {}, kSendMs);
      return;
    }
    if (session_ >= 0 && !abi::send_frame(conn.get(), Frame::Attached, *said, {}, kSendMs))
      session_ = -1;
  }
  bool gone;
  {
    std::lock_guard<std::mutex> lock(send_mu_); // send() may have ended it meanwhile
    gone = session_ < 0;
  }
  while (!gone && !stop_) {
    pollfd p[3] = {{conn.get(), POLLIN, 0}, {listen_.get(), POLLIN, 0},
                   {wake_read_.get(), POLLIN, 0}};
    if (poll(p, 3, -1) < 0 && errno != EINTR)
      break;
    if (p[1].revents & POLLIN) { // someone else: refused while this session lasts
      runtime::UniqueFd other = accept_.accept(listen_.get(), SOCK_CLOEXEC);
      ucred cred{};
      socklen_t len = sizeof cred;
      if (other.valid() && getsockopt(other.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
        (void)abi::send_frame(other.get(), Frame::Refused,
                              cred.uid != 0 && cred.uid != getuid()
                                  ? refusal(cred.uid)
                                  : "busy: gpubt (pid " + std::to_string(peer) +
                                        ") is attached to process " + std::to_string(getpid()) +
                                        "; one session at a time",
                              {}, kSendMs);
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto f = abi::recv_frame(conn.get(), 1000);
      if (f)
        for (int fd : f->fds)
          close(fd);
      gone = !f;
      if (!f || f->type == Frame::Detach)
        break;
    }
  }
  std::string results = handler_.detach();
  std::lock_guard<std::mutex> lock(send_mu_);
  if (session_ >= 0 && !gone)
    (void)abi::send_frame(conn.get(), Frame::Results, results, {}, kSendMs);
  session_ = -1;
}

bool ControlServer::send_events(const std::string &records) {
  return send(Frame::Events, records);
}

bool ControlServer::send_log(const std::string &line) { return send(Frame::Log, line); }

bool ControlServer::send(Frame type, const std::string &bytes) {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (session_ < 0)
    return false;
  if (!abi::send_frame(session_, type, bytes, {}, kSendMs)) {
    shutdown(session_, SHUT_RDWR); // the session loop sees it and detaches
    session_ = -1;
    return false;
  }
  return true;
}

void ControlServer::finish(const std::string &results) {
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    if (session_ >= 0) {
      (void)abi::send_frame(session_, Frame::Results, results, {}, kSendMs);
      shutdown(session_, SHUT_RDWR);
      session_ = -1;
    }
  }
  unlink(path_.c_str());
}

} // namespace gpubt::agent
