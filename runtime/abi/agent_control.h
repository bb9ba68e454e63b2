// gpubt <-> a dormant agent (gpubt attaching to a running CUDA process, issue 13): where the
// agent listens and the frames both sides send on that Unix socket. Std and POSIX only.
//
// A process started with the agent but no GPUBT_AGENT_CONFIG listens on <folder>/<pid>.sock,
// the folder chosen as agent_folders.h says (one of the process's user's, that no one else may
// write to). The agent also checks each peer's credentials (root or its own user only).
//
// A session: gpubt sends Attach (the agent config, the probe cubins, the BPF map fds of
// host<->GPU maps as SCM_RIGHTS); the agent answers Attached or Refused; then sends Events (printf
// records) as traced launches end, and Log (-v lines); gpubt sends Detach (or closes the socket: the agent detaches
// by itself); the agent answers Results (what write_agent_results makes) and closes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::abi {

enum class Frame : uint32_t { Attach = 1, Attached, Refused, Events, Detach, Results, Log };
// A job started with GPUBT_AGENT_MODE=timing in its environment (`gpubt agent env --timing`):
// its agent never subscribes the Compute Sanitizer, so that each attach can time the launches
// with CUPTI instead (the two cannot share a process, runtime/cuda_agent/launch_timer.h). It
// takes only scripts whose gpu probes all run in gpubt from each launch's record.
inline constexpr char kAgentModeVar[] = "GPUBT_AGENT_MODE";
inline constexpr char kTimingMode[] = "timing";

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

} // namespace gpubt::abi
