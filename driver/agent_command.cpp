// `gpubt agent env` (see agent_command.h).
#include "driver/agent_command.h"

#include <string>

#include "driver/exit_codes.h"
#include "runtime/abi/agent_control.h"
#include "runtime/gpu/gpu_inject.h"

namespace gpubt::driver {

int run_agent_command(int argc, char **argv, std::FILE *out) {
  std::string word = argc >= 3 ? argv[2] : "";
  std::string flag = argc == 4 ? argv[3] : "";
  bool timing = flag == "--timing";
  if (word != "env" || argc > 4 || (argc == 4 && !timing)) {
    bool help = word == "--help" || word == "-h";
    std::fprintf(help ? out : stderr,
                 "usage: gpubt agent env [--timing]\n"
                 "  prints how to start CUDA programs with gpubt's agent, so that gpubt can "
                 "attach to them later\n"
                 "  --timing: the agent times launches instead: attached, gpu:kretprobe "
                 "/last_thread/ probes\n"
                 "            that read launch-level values (tools/kerneltime.bt, launchlate.bt, "
                 "--timeline)\n"
                 "            run from CUPTI's launch records, and no probe runs in the kernels\n");
    return help ? ExitOk : ExitUserError;
  }
  auto found = runtime::find_agent_library();
  if (!found)
    std::fprintf(stderr, "WARNING: %s\n", found.error().c_str());
  std::string agent = found ? *found : "/usr/lib/gpubt/libgpubt_agent.so";
  std::string dir = agent.substr(0, agent.rfind('/'));
  std::string mode = std::string(abi::kAgentModeVar) + "=" + abi::kTimingMode;
  std::string shell_mode = timing ? "export " + mode + "\n" : "";
  std::string unit_mode = timing ? "Environment=" + mode + "\n" : "";
  std::string docker_mode = timing ? "-e " + mode + " " : "";
  std::fprintf(out, "%s",
               timing ? "# CUDA programs started with gpubt's agent in timing mode run at plain "
                        "speed until gpubt\n"
                        "# attaches (`gpubt -p PID ...`); attached, every kernel launch is timed "
                        "by CUPTI\n"
                        "# (as the PyTorch profiler and Nsight Systems time them) and gpu probes "
                        "that read only\n"
                        "# launch-level values run in gpubt. No probe runs in the kernels: "
                        "scripts that need one\n"
                        "# are refused, and the job's own CUPTI profiling cannot run while gpubt "
                        "is attached.\n"
                        "# Only root and the process's own user may attach.\n"
                      : "# CUDA programs started with gpubt's agent run at plain speed (no "
                        "patches, no\n"
                        "# per-launch callbacks) until gpubt attaches: `gpubt -p PID ...`, or "
                        "gpubt with\n"
                        "# gpu probes and neither -c nor -p (every such process). Only root and "
                        "the\n"
                        "# process's own user may attach. (`gpubt agent env --timing`: a job "
                        "whose launches\n"
                        "# gpubt times, for kerneltime and launchlate at production cost.)\n");
  std::fprintf(out,
               "\n"
               "# A shell:\n"
               "export CUDA_INJECTION64_PATH=%s\n"
               "%s"
               "\n"
               "# A systemd unit (systemctl edit UNIT):\n"
               "[Service]\n"
               "Environment=CUDA_INJECTION64_PATH=%s\n"
               "%s"
               "\n"
               "# A container: the agent mounted in, its socket folder shared with the host\n"
               "# (gpubt on the host then runs with the same GPUBT_AGENT_DIR; Kubernetes: the same\n"
               "# as env entries and hostPath volumes):\n"
               "docker run -e CUDA_INJECTION64_PATH=/opt/gpubt/libgpubt_agent.so %s\\\n"
               "  -e GPUBT_AGENT_DIR=/run/gpubt -v %s:/opt/gpubt:ro -v /run/gpubt:/run/gpubt ...\n",
               agent.c_str(), shell_mode.c_str(), agent.c_str(), unit_mode.c_str(),
               docker_mode.c_str(), dir.c_str());
  return ExitOk;
}

} // namespace gpubt::driver
