// `gpubt agent env`: how to start CUDA programs with gpubt's agent, dormant until gpubt attaches.
#pragma once
#include <cstdio>

namespace gpubt::driver {

// Handles `gpubt agent ...` (ARGV[1] is "agent"); returns the exit status.
int run_agent_command(int argc, char **argv, std::FILE *out);

} // namespace gpubt::driver
