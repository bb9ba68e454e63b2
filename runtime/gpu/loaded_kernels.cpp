// The Vulkan layer's listing run (loaded_kernels.h): the same folder, config and results file as
// a traced run (gpu_inject.h), with a config that asks for names only.
#include "runtime/gpu/loaded_kernels.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <signal.h>

#include "runtime/gpu/gpu_inject.h"
#include "runtime/process/child_process.h"

namespace gpubt::runtime {

Result<std::set<std::string>> vulkan_kernels_made_by(const std::string &command,
                                                     std::ostream &err) {
  auto run = prepare_listing_run();
  if (!run)
    return make_error(run.error());
  export_gpu_env(*run);
  auto child = ChildProcess::spawn(command, /*stdout_to_stderr=*/true);
  if (!child)
    return make_error(child.error());
  err << "gpubt: running '" << command << "' to see the Vulkan compute shaders it makes (they "
      << "exist only once it makes them); its output follows on stderr\n";
  if (auto st = (*child)->start(); !st)
    return make_error(st.error());
  pollfd p{(*child)->pidfd(), POLLIN, 0};
  while (!(*child)->exited())
    if (poll(&p, 1, -1) < 0 && errno != EINTR)
      return make_error(std::string("waiting for '") + command + "': " + std::strerror(errno));
  auto end = (*child)->exit_info();
  if (end && end->exec_errno)
    return make_error("cannot run '" + command + "': " + std::strerror(end->exec_errno));
  if (end && (!end->exited || end->status != 0))
    err << "gpubt: " << end->name << " (pid " << end->pid << ") "
        << (end->exited ? "exited with status " + std::to_string(end->status)
                        : "was killed by signal " + std::to_string(end->signal))
        << ": the list holds the shaders it made until then\n";
  auto outcome = collect_gpu_results(abi::ProgramSpec{}, *run);
  if (!outcome)
    return make_error("gpubt's Vulkan layer wrote no results: '" + command + "' made no Vulkan "
                      "device, or ended before its exit handlers ran; no compute shaders to list");
  return outcome->kernels;
}

} // namespace gpubt::runtime
