// Whether a socket under an agent folder is really the agent of the process it names. gpubt runs
// as root: a socket any user can make must not receive a script's config and map fds, nor feed
// gpubt frames, unless the process behind it is the agent's (runtime/abi/agent_control.h).
#pragma once
#include <sys/types.h>

#include "runtime/abi/agent_folders.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

// Connects to SOCKET as the agent of process PID (its number here; SOCKET.pid may be the one
// the process's own pid namespace gives it) if: PID's effective uid owns SOCKET's folder, PID has
// libgpubt_agent mapped, and the listener's SO_PEERCRED is PID with that uid. The connect does
// not wait: a full backlog is an error. Error: which check failed, for a warning.
Result<UniqueFd> connect_to_agent(const abi::AgentSocket &socket, pid_t pid);

} // namespace gpubt::runtime
