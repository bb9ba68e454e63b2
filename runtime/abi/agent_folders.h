// Where a dormant agent's control socket lives (<folder>/<pid>.sock), chosen by the agent that
// makes it and looked for by gpubt with the same rules. Std and POSIX only.
//
// GPUBT_AGENT_DIR, when set, is the one folder of both. Otherwise an agent of (effective) user
// UID listens in the first of these it can use:
//   1. /tmp/gpubt-agent-UID, made mode 0700 when missing;
//   2. /run/user/UID/gpubt-agent, when the user's runtime folder /run/user/UID exists (root
//      makes it, so no one else can have made it first);
//   3. /tmp/gpubt-agent-UID.XXXXXX: one of the user's own already there, else a new one
//      (mkdtemp: a name no one can take first).
// A folder is usable only when it is a folder (not a link to one) that the user owns and no one
// else may write to. Anyone may make /tmp/gpubt-agent-UID before the user does: that takes
// the agent to 2 or 3 instead of leaving it without a socket. gpubt looks in every folder of
// those shapes (any user's) and trusts a socket only when its folder's owner is the target
// process's user (runtime/gpu/agent_peer.h checks that, and the peer's credentials).
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::abi {

// The folders the rules above start from ("/tmp" and "/run/user"; tests point them elsewhere).
struct AgentFolderRoots {
  std::string tmp = "/tmp";
  std::string run_user = "/run/user";
};

// The folder this process's agent listens in, made if needed (rules above); error: none of
// them is usable (or GPUBT_AGENT_DIR is not), with why.
Result<std::string> choose_agent_dir(const AgentFolderRoots &roots = {});

// Where an agent of user UID may listen, in words ("/tmp/gpubt-agent-0, ..."), for messages.
std::string agent_dirs_text(uid_t uid, const AgentFolderRoots &roots = {});

// Makes DIR (mode 0700) unless it exists; error if it is not a folder owned by this user that
// no one else may write to (a folder someone else made in /tmp must not receive the socket).
Status make_private_dir(const std::string &dir);

struct AgentSocket {
  pid_t pid = 0;
  uid_t uid = 0; // the folder's owner
  std::string path;
};
// Every agent socket in the folders the rules above name (any user's), with the pid it names;
// PID > 0: only that process's. Only folders (not links to them) that no one but their owner
// may write to. Whether the socket is the agent of the process it names is the caller's to
// check (runtime/gpu/agent_peer.h).
std::vector<AgentSocket> find_agent_sockets(pid_t pid = 0, const AgentFolderRoots &roots = {});

} // namespace gpubt::abi
