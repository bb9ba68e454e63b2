// The agent's own threads: named gpubt-ROLE, so that host probes on the CUDA libraries skip
// their calls (agent_protocol.h), and in relaxed capture mode, so that nothing they do is refused
// during (or breaks) the program's graph captures.
#pragma once

namespace gpubt::agent {

void become_agent_thread(const char *role);

} // namespace gpubt::agent
