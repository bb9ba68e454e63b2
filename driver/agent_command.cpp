// `gpubt agent env` (see agent_command.h).
#include "driver/agent_command.h"

#include <string>

#include "driver/exit_codes.h"
#include "runtime/gpu/gpu_inject.h"

namespace gpubt::driver {

int run_agent_command(int argc, char **argv, std::FILE *out) {
  std::string word = argc == 3 ? argv[2] : "";
  if (word != "env") {
    bool help = word == "--help" || word == "-h";
    std::fprintf(help ? out : stderr, "usage: gpubt agent env\n"
                                      "  prints how to start CUDA programs with gpubt's agent, so "
                                      "that gpubt can attach to them later\n");
    return help ? ExitOk : ExitUserError;
  }
  auto found = runtime::find_agent_library();
  if (!found)
    std::fprintf(stderr, "WARNING: %s\n", found.error().c_str());
  std::string agent = found ? *found : "/usr/lib/gpubt/libgpubt_agent.so";
  std::string dir = agent.substr(0, agent.rfind('/'));
  std::fprintf(out,
               "# CUDA programs started with gpubt's agent run at plain speed (no patches, no\n"
               "# per-launch callbacks) until gpubt attaches: `gpubt -p PID ...`, or gpubt with\n"
               "# gpu probes and neither -c nor -p (every such process). Only root and the\n"
               "# process's own user may attach.\n"
               "\n"
               "# A shell:\n"
               "export CUDA_INJECTION64_PATH=%s\n"
               "\n"
               "# A systemd unit (systemctl edit UNIT):\n"
               "[Service]\n"
               "Environment=CUDA_INJECTION64_PATH=%s\n"
               "\n"
               "# A container: the agent mounted in, its socket folder shared with the host\n"
               "# (gpubt on the host then runs with the same GPUBT_AGENT_DIR; Kubernetes: the same\n"
               "# as env entries and hostPath volumes):\n"
               "docker run -e CUDA_INJECTION64_PATH=/opt/gpubt/libgpubt_agent.so \\\n"
               "  -e GPUBT_AGENT_DIR=/run/gpubt -v %s:/opt/gpubt:ro -v /run/gpubt:/run/gpubt ...\n",
               agent.c_str(), agent.c_str(), dir.c_str());
  return ExitOk;
}

} // namespace gpubt::driver
