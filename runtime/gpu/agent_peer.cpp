// The checks before gpubt talks to an agent socket (see agent_peer.h).
#include "runtime/gpu/agent_peer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>

namespace gpubt::runtime {
namespace {

// The effective uid of PID (/proc/PID/status "Uid: real effective saved fs").
std::optional<uid_t> effective_uid(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      uid_t real, effective;
      if (fields >> real >> effective)
        return effective;
    }
  return std::nullopt;
}

// PID has a file named libgpubt_agent* mapped (CUDA loads it from CUDA_INJECTION64_PATH).
bool maps_agent(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    size_t slash = line.rfind('/');
    if (slash != std::string::npos && line.compare(slash + 1, 14, "libgpubt_agent") == 0)
      return true;
  }
  return false;
}

} // namespace

Result<UniqueFd> connect_to_agent(const abi::AgentSocket &socket, pid_t pid) {
  std::string who = "process " + std::to_string(pid);
  auto uid = effective_uid(pid);
  if (!uid)
    return make_error(who + " is gone");
  if (*uid != socket.uid)
    return make_error("not connecting to " + socket.path + ": its folder belongs to uid " +
                      std::to_string(socket.uid) + ", " + who + " to uid " +
                      std::to_string(*uid));
  if (!maps_agent(pid))
    return make_error("not connecting to " + socket.path + ": " + who +
                      " has not loaded gpubt's agent (libgpubt_agent.so)");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.path.size() >= sizeof addr.sun_path)
    return make_error("the socket path " + socket.path + " is too long");
  std::strcpy(addr.sun_path, socket.path.c_str());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid() || connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
    return make_error("cannot connect to " + socket.path + ": " +
                      (errno == EAGAIN ? std::string("its agent is not accepting connections")
                                       : strerror(errno)));
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0)
    return make_error(std::string("SO_PEERCRED: ") + strerror(errno));
  if (peer.pid != pid || peer.uid != *uid)
    return make_error("not talking to " + socket.path + ": it is served by pid " +
                      std::to_string(peer.pid) + " (uid " + std::to_string(peer.uid) +
                      "), not by " + who + " (uid " + std::to_string(*uid) + ")");
  return fd;
}

} // namespace gpubt::runtime
