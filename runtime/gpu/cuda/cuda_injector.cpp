// The CUDA injector: the probes' PTX assembled by ptxas for each GPU of this machine (as tools
// patches), the agent found and loaded with CUDA_INJECTION64_PATH; the one place that decides
// --gpu-backend.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/gpu/gpu_arch.h"
#include "runtime/gpu/gpu_inject.h"
#include "runtime/gpu/injector.h"
#include "runtime/process/binary_paths.h"

namespace gpubt::runtime {
namespace {

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs ARGV with stdout+stderr into OUT_PATH; returns the exit status (-1: could not run).
int run_tool(const std::vector<std::string> &argv, const std::string &out_path) {
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    FILE *f = std::freopen(out_path.c_str(), "w", stdout);
    if (f)
      dup2(fileno(stdout), 2);
    std::vector<char *> args;
    for (const auto &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// "sm_90" for each distinct GPU architecture of this machine (else the one the probes name).
std::vector<std::string> gpu_archs(const abi::ProgramSpec &spec) {
  std::vector<std::string> archs = machine_gpu_archs().archs;
  if (archs.empty())
    archs.push_back(spec.device.arch.empty() ? "sm_90" : spec.device.arch);
  return archs;
}

// The PTX names the SM codegen assumed (".target sm_90"); each GPU gets it for its own SM, and
// ptxas says so if a probe uses an instruction that SM lacks.
std::string retarget_ptx(const std::string &ptx, const std::string &arch) {
  size_t at = ptx.find(".target ");
  if (at == std::string::npos)
    return ptx;
  size_t begin = at + 8, end = ptx.find_first_of(",\n", begin);
  return ptx.substr(0, begin) + arch + ptx.substr(end == std::string::npos ? ptx.size() : end);
}

class CudaInjector : public Injector {
public:
  const char *name() const override { return "CUDA"; }
  const char *traces() const override { return "CUDA kernels"; }
  // gpu:hang probes need the agent even without gpu probes: it watches the launches.
  bool has_code(const abi::ProgramSpec &spec) const override {
    return !spec.device.ptx.empty() ||
           std::any_of(spec.probes.begin(), spec.probes.end(),
                       [](const abi::ProbeSpec &p) {
                         return p.kind == abi::AttachKind::Hang ||
                                p.kind == abi::AttachKind::LaunchEnd;
                       });
  }
  bool watches_launches() const override { return true; }
  bool can_attach() const override { return true; }
  // The Compute Sanitizer's block entry and exit, memory accesses and barriers (the agent's
  // sanitizer_points()); the PTX backend inserts at the same (ptx_instrument.h).
  bool supports(const abi::ProbePoint &p) const override {
    return p.kind == abi::ProbePointKind::Entry || p.kind == abi::ProbePointKind::Exit ||
           p.kind == abi::ProbePointKind::MemoryAccess || p.kind == abi::ProbePointKind::Barrier;
  }
  const char *no_results() const override {
    return "no CUDA program made a context and exited normally with gpubt's agent";
  }

  // A running process's modules are loaded already: attaching patches them (sass). -c
  // instruments each module as it loads, from its PTX where it has one (auto, ptx) or not.
  Status apply_settings(const InjectorSettings &s, abi::AgentConfig &config,
                        std::vector<std::string> &) const override {
    if (s.attach && s.backend == abi::GpuBackend::Ptx)
      return make_error("--gpu-backend=ptx needs -c: a running process's modules are loaded "
                        "already, so gpubt patches them (sass)");
    config.backend = s.attach ? abi::GpuBackend::Sass : s.backend;
    return Ok{};
  }

  Result<std::string> find() const override { return find_agent_library(); }

  // The probes assembled for each GPU architecture into CONFIG.
  Status prepare(const abi::ProgramSpec &spec, const std::string &dir, const std::string &tag,
                 abi::AgentConfig &config) const override {
    std::string probes_ptx = spec.device.ptx; // with its dispatchers (targets/ptx)
    if (probes_ptx.empty())
      return Ok{}; // gpu:hang only: the agent watches launches and instruments nothing
    if (!tag.empty())
      tag_probe_functions(probes_ptx, config.device.probes, tag);
    std::string ptxas = find_ptxas();
    for (const auto &arch : gpu_archs(spec)) {
      std::string ptx = dir + "/probes." + arch + ".ptx";
      std::ofstream(ptx) << retarget_ptx(probes_ptx, arch);
      std::string cubin = dir + "/probes." + arch + ".cubin", log = dir + "/" + arch + ".log";
      int st =
          run_tool({ptxas, "-arch=" + arch, "--compile-as-tools-patch", ptx, "-o", cubin}, log);
      if (st != 0)
        return make_error("assembling the gpu probes for " + arch + " with " + ptxas +
                          " failed" + (st == 127 ? " (not found: set GPUBT_PTXAS)" : "") + ":\n" +
                          read_file(log));
      config.cubins.push_back({arch, cubin, ptx, ""});
    }
    return Ok{};
  }

  void add_environment(const std::string &installed, Environment &env) const override {
    env.push_back({"CUDA_INJECTION64_PATH", installed});
  }
};

} // namespace

std::string find_ptxas() {
  if (const char *p = std::getenv("GPUBT_PTXAS"))
    return p;
  if (auto p = find_in_path("ptxas"))
    return *p;
  return "/usr/local/cuda/bin/ptxas";
}

Result<std::string> find_agent_library() {
  if (const char *p = std::getenv("GPUBT_AGENT_PATH"))
    return is_file(p) ? Result<std::string>(p)
                      : make_error(std::string("GPUBT_AGENT_PATH: no file ") + p);
  std::string dir = self_dir();
  for (const char *rel : {"/libgpubt_agent.so", "/../lib/gpubt/libgpubt_agent.so",
                          "/runtime/cuda_agent/libgpubt_agent.so"})
    if (is_file(dir + rel))
      return dir + rel;
  return make_error("gpu probes need libgpubt_agent.so (built where the CUDA Compute Sanitizer "
                    "SDK is installed): put it next to gpubt or set GPUBT_AGENT_PATH");
}

std::unique_ptr<Injector> make_cuda_injector() { return std::make_unique<CudaInjector>(); }

} // namespace gpubt::runtime
