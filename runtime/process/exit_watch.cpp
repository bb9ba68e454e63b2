// A -p process's exit status from the proc connector (see exit_watch.h). A classic BPF filter
// on the socket keeps only PID's own exit event, so the other exits of a busy machine never fill
// its queue however long the trace runs.
#include "runtime/process/exit_watch.h"
#include "runtime/process/task_name.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <linux/capability.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

// Where the fields the filter tests lie in a message: netlink header, connector header, event.
constexpr uint32_t kEvent = NLMSG_LENGTH(0) + sizeof(cn_msg);
constexpr uint32_t kWhat = kEvent + offsetof(proc_event, what);
constexpr uint32_t kExitPid = kEvent + offsetof(proc_event, event_data.exit.process_pid);
constexpr uint32_t kExitTgid = kEvent + offsetof(proc_event, event_data.exit.process_tgid);

// Passes PROC_EVENT_EXIT of the thread PID that leads its group; drops everything else. Classic
// BPF loads words in network byte order, hence htonl.
Status filter_exits_of(int socket, int pid) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kWhat),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(proc_event::PROC_EVENT_EXIT), 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kExitPid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(uint32_t(pid)), 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kExitTgid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(uint32_t(pid)), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
      BPF_STMT(BPF_RET | BPF_K, 0),
  };
  sock_fprog prog{sizeof code / sizeof code[0], code};
  if (setsockopt(socket, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0)
    return make_error(std::string("SO_ATTACH_FILTER: ") + strerror(errno));
  return Ok{};
}

Status subscribe(int socket) {
  alignas(nlmsghdr) char msg[NLMSG_LENGTH(sizeof(cn_msg) + sizeof(uint32_t))] = {};
  auto *nl = reinterpret_cast<nlmsghdr *>(msg);
  nl->nlmsg_len = sizeof msg;
  nl->nlmsg_type = NLMSG_DONE;
  auto *cn = reinterpret_cast<cn_msg *>(NLMSG_DATA(nl));
  cn->id = {CN_IDX_PROC, CN_VAL_PROC};
  cn->len = sizeof(uint32_t);
  uint32_t op = PROC_CN_MCAST_LISTEN;
  std::memcpy(cn->data, &op, sizeof op);
  if (send(socket, msg, sizeof msg, 0) != ssize_t(sizeof msg))
    return make_error(std::string("subscribing to the proc connector: ") + strerror(errno));
  return Ok{};
}

// The proc connector takes a listener only with CAP_NET_ADMIN, and says no only in an ack
// nobody reads: asked first, the reason is known at once.
bool can_listen() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return syscall(SYS_capget, &header, data) == 0 &&
         (data[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32)));
}

std::string comm_of(int pid) {
  std::string name = task_name(pid);
  return name.empty() ? "process" : name;
}

} // namespace

std::optional<uint32_t> exit_code_of(int pid, const char *message, size_t n) {
  if (n < kEvent + offsetof(proc_event, event_data.exit.exit_code) + sizeof(uint32_t))
    return std::nullopt;
  proc_event ev{};
  std::memcpy(&ev, message + kEvent, std::min(sizeof ev, n - kEvent));
  if (ev.what != proc_event::PROC_EVENT_EXIT || ev.event_data.exit.process_pid != pid ||
      ev.event_data.exit.process_tgid != pid)
    return std::nullopt;
  return ev.event_data.exit.exit_code;
}

std::unique_ptr<ProcessExitWatch> ProcessExitWatch::start(int pid) {
  std::unique_ptr<ProcessExitWatch> w(new ProcessExitWatch);
  w->pid_ = pid;
  w->name_ = comm_of(pid);
  if (!can_listen()) {
    w->error_ = "the proc connector needs root: CAP_NET_ADMIN";
    return w;
  }
  UniqueFd fd(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR));
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  // The filter before the bind: once bound, another listener's subscription already sends
  // every process's events here.
  Status st = fd.valid() ? filter_exits_of(fd.get(), pid)
                         : make_error(std::string("the proc connector: ") + strerror(errno));
  if (st && bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
    st = make_error(std::string("the proc connector: ") + strerror(errno));
  if (st)
    st = subscribe(fd.get());
  if (st)
    w->socket_ = std::move(fd);
  else
    w->error_ = st.error();
  return w;
}

ChildExit ProcessExitWatch::ended() {
  ChildExit e;
  e.pid = pid_;
  e.name = name_;
  if (!socket_.valid()) {
    e.unknown_why = error_;
    return e;
  }
  // The kernel sends the event before the process's pidfd becomes readable; the wait is for a
  // caller that asks early. Each message is checked to be PID's exit: the filter keeps the
  // others out, and this does not rely on it alone.
  std::optional<uint32_t> found;
  for (int waits = 0; !found && waits < 20; ++waits) {
    pollfd p{socket_.get(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue;
    alignas(nlmsghdr) char buf[4096];
    ssize_t n = recv(socket_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      e.unknown_why = std::string("reading the proc connector: ") + strerror(errno);
      return e;
    }
    if (n > 0)
      found = exit_code_of(pid_, buf, size_t(n));
  }
  if (!found) {
    e.unknown_why = "no exit event came from the proc connector";
    return e;
  }
  uint32_t code = *found; // task->exit_code: a wait status
  if (code & 0x7f) {
    e.signal = int(code & 0x7f);
  } else {
    e.exited = true;
    e.status = int((code >> 8) & 0xff);
  }
  return e;
}

} // namespace gpubt::runtime
