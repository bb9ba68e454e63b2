// gpubt <-> a dormant agent (gpubt attaching to a running CUDA process, issue 13): where the
// agent listens and the frames both sides send on that Unix socket. Std and POSIX only.
//
// A process started with the agent but no GPUBT_AGENT_CONFIG listens on
// <agent dir>/<pid>.sock, the agent dir being GPUBT_AGENT_DIR or /tmp/gpubt-agent-<uid>: made
// mode 0700 by the process's user and refused if anyone else owns it or may write to it. The
// agent also checks each peer's credentials (root or its own user only).
//
// A session: gpubt sends Attach (the agent config, the probe cubins, the BPF map fds of
// host<->GPU maps as SCM_RIGHTS); the agent answers Attached or Refused; then sends Events (printf
// records) as traced launches end, and Log (-v lines); gpubt sends Detach (or closes the socket: the agent detaches
// by itself); the agent answers Results (what write_agent_results makes) and closes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::abi {

enum class Frame : uint32_t { Attach = 1, Attached, Refused, Events, Detach, Results, Log };
// A Log frame whose text starts so is a warning: gpubt prints it, -v or not.
inline constexpr char kAgentWarning[] = "WARNING: ";

struct ControlFrame {
  Frame type = Frame::Refused;
  std::string bytes;
  std::vector<int> fds; // received with it (the receiver owns them)
};

// The most bytes a frame of TYPE may carry: a peer's header cannot make the reader allocate more
// (Attach and Results carry cubins and device maps; the others a line or a printf ring's worth).
uint64_t max_frame_bytes(Frame type);

// Sends one frame (MSG_NOSIGNAL: a peer gone is an error, not a SIGPIPE). FDS travel with it.
// TIMEOUT_MS (-1: no limit) bounds the whole frame: a peer that stops reading cannot hold us.
Status send_frame(int socket, Frame type, const std::string &bytes,
                  const std::vector<int> &fds = {}, int timeout_ms = -1);
// Reads one frame within TIMEOUT_MS in all (-1: no limit), so a peer that sends a byte at a time
// cannot hold the reader either. Error "closed" at end of stream; a frame over its type's
// max_frame_bytes is an error before anything is allocated, and memory grows only with the
// bytes that arrive.
Result<ControlFrame> recv_frame(int socket, int timeout_ms = -1);

// Attach's bytes: the config text and each cubin's bytes (AgentConfig::cubins order).
std::string pack_blobs(const std::vector<std::string> &blobs);
Result<std::vector<std::string>> unpack_blobs(const std::string &bytes);

// The folder agents of user UID listen in.
std::string agent_dir(uid_t uid);
// Makes DIR (mode 0700) unless it exists; error if it is not a folder owned by this user that
// no one else may write to (a folder someone else made in /tmp must not receive the socket).
Status make_private_dir(const std::string &dir);

struct AgentSocket {
  pid_t pid = 0;
  uid_t uid = 0; // the folder's owner
  std::string path;
};
// Every agent socket this user may see (GPUBT_AGENT_DIR, else /tmp/gpubt-agent-*), with the pid
// it names; PID > 0: only that process's. Only folders (not links to them) that no one but their
// owner may write to: anyone can make a /tmp/gpubt-agent-N of their own. Whether the socket is
// the agent of the process it names is the caller's to check (runtime/gpu/agent_peer.h).
std::vector<AgentSocket> find_agent_sockets(pid_t pid = 0);

} // namespace gpubt::abi
