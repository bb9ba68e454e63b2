// The files and environment of a gpu run (see gpu_inject.h). ptxas runs as a child process with
// its output captured in the run's folder.
#include "runtime/gpu/gpu_inject.h"

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/device_abi.h"
#include "runtime/process/binary_paths.h"
#include "runtime/gpu/gpu_arch.h"
#include "runtime/process/owned_temp_dir.h"
#include "runtime/vulkan/layer_names.h"

namespace gpubt::runtime {
namespace {

bool is_file(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return ".";
  std::string p(buf, n);
  return p.substr(0, p.rfind('/'));
}

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

} // namespace

Result<std::string> find_agent_library() {
  if (const char *p = std::getenv("GPUBT_AGENT_PATH"))
    return is_file(p) ? Result<std::string>(p)
                      : make_error(std::string("GPUBT_AGENT_PATH: no file ") + p);
  std::string dir = self_dir();
  for (const char *rel : {"/libgpubt_agent.so", "/../lib/gpubt/libgpubt_agent.so",
                          "/runtime/agent/libgpubt_agent.so"})
    if (is_file(dir + rel))
      return dir + rel;
  return make_error("gpu probes need libgpubt_agent.so (built where the CUDA Compute Sanitizer "
                    "SDK is installed): put it next to gpubt or set GPUBT_AGENT_PATH");
}

std::string find_ptxas() {
  if (const char *p = std::getenv("GPUBT_PTXAS"))
    return p;
  if (auto p = find_in_path("ptxas"))
    return *p;
  return "/usr/local/cuda/bin/ptxas";
}

namespace {

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

} // namespace

GpuRun::GpuRun(GpuRun &&o) noexcept
    : dir(std::move(o.dir)), dir_lock(std::move(o.dir_lock)), config_path(std::move(o.config_path)),
      results_path(std::move(o.results_path)), env(std::move(o.env)), events(std::move(o.events)),
      child_events(std::move(o.child_events)), config(std::move(o.config)),
      cuda_missing(std::move(o.cuda_missing)) {
  o.dir.clear();
}

GpuRun::~GpuRun() {
  if (dir.empty())
    return;
  std::error_code ec;
  if (std::getenv("GPUBT_KEEP_TEMP"))
    std::filesystem::remove(dir + "/.owner.lock", ec); // kept for an hour, see owned_temp_dir.h
  else
    std::filesystem::remove_all(dir, ec);
}

std::string find_vulkan_layer() {
  if (const char *p = std::getenv("GPUBT_VULKAN_LAYER_DIR"))
    return is_file(std::string(p) + "/" + kVulkanLayerManifest) ? p : "";
  std::string dir = self_dir();
  for (const char *rel : {"", "/runtime/vulkan", "/../lib/gpubt"})
    if (is_file(dir + rel + "/" + kVulkanLayerManifest))
      return dir + rel;
  return "";
}

std::string missing_vulkan_layer() {
  if (const char *p = std::getenv("GPUBT_VULKAN_LAYER_DIR"))
    return std::string("the Vulkan layer is missing: no ") + kVulkanLayerManifest + " in " + p +
           " (GPUBT_VULKAN_LAYER_DIR)";
  return std::string("the Vulkan layer is missing: no ") + kVulkanLayerManifest +
         " (with libgpubt_vulkan_layer.so) next to gpubt, in runtime/vulkan or in ../lib/gpubt "
         "(install it with gpubt, or set GPUBT_VULKAN_LAYER_DIR)";
}

namespace {

const abi::DeviceCode *vulkan_image(const abi::ProgramSpec &spec) {
  for (const auto &image : spec.device.images)
    if (image.format == abi::DeviceFormat::SpirvVulkan)
      return &image;
  return nullptr;
}

// The CUDA agent's part: probes assembled for each GPU architecture into CONFIG.
// TAG (attaching): the probe functions' names get it (tag_probe_functions).
Status prepare_cuda(const abi::ProgramSpec &spec, const GpuRun &run, abi::AgentConfig &config,
                    const std::string &tag) {
  std::string probes_ptx = spec.device.ptx; // with its dispatchers (targets/ptx)
  if (!tag.empty())
    tag_probe_functions(probes_ptx, config.device.probes, tag);
  std::string ptxas = find_ptxas();
  for (const auto &arch : gpu_archs(spec)) {
    std::string ptx = run.dir + "/probes." + arch + ".ptx";
    std::ofstream(ptx) << retarget_ptx(probes_ptx, arch);
    std::string cubin = run.dir + "/probes." + arch + ".cubin", log = run.dir + "/" + arch + ".log";
    int st = run_tool({ptxas, "-arch=" + arch, "--compile-as-tools-patch", ptx, "-o", cubin}, log);
    if (st != 0)
      return make_error("assembling the gpu probes for " + arch + " with " + ptxas + " failed" +
                        (st == 127 ? " (not found: set GPUBT_PTXAS)" : "") + ":\n" +
                        read_file(log));
    config.cubins.push_back({arch, cubin, ptx, ""});
  }
  return Ok{};
}

void replace_all(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

} // namespace

void tag_probe_functions(std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes,
                         const std::string &tag) {
  for (const char *prefix : {GPUBT_PROBE_FUNCTION_PREFIX, "gpubt_dispatch_"}) {
    std::string tagged = std::string(prefix) + tag + "_";
    replace_all(ptx, prefix, tagged);
    for (auto &p : probes) {
      replace_all(p.function, prefix, tagged);
      replace_all(p.patch, prefix, tagged);
    }
  }
}

Result<GpuRun> prepare_gpu_run(const abi::ProgramSpec &spec, abi::GpuBackend backend,
                               bool verbose, bool attach) {
  remove_abandoned_temp_dirs("gpubt-gpu-"); // left by a gpubt that was killed
  auto agent = find_agent_library();
  // Vulkan compute shaders: the layer links the probes' SPIR-V into them (runtime/vulkan); it is
  // loaded as a program starts, so attaching serves CUDA only.
  const abi::DeviceCode *spirv = vulkan_image(spec);
  std::string layer = spirv && !attach ? find_vulkan_layer() : "";
  if (!agent && layer.empty() && spirv && !attach)
    return make_error(missing_vulkan_layer() + "; nor is there a CUDA agent: " + agent.error());
  if (!agent && layer.empty())
    return make_error(agent.error());
  if (layer.empty() && spirv && !attach && verbose)
    std::fprintf(stderr, "gpubt: Vulkan compute shaders are not traced: %s\n",
                 missing_vulkan_layer().c_str());
  auto tmp = make_owned_temp_dir("gpubt-gpu-");
  if (!tmp)
    return make_error(tmp.error());
  GpuRun run;
  run.dir = tmp->path;
  run.dir_lock = std::move(tmp->lock);
  run.config_path = run.dir + "/agent.cfg";
  run.results_path = run.dir + "/results.bin";
  abi::AgentConfig config;
  config.device = abi::device_spec_for_agent(spec.device);
  bool cuda = bool(agent);
  if (!cuda)
    run.cuda_missing = agent.error();
  if (cuda) {
    std::string tag =
        attach ? "a" + std::to_string(getpid()) + "_" + std::to_string(time(nullptr)) : "";
    auto st = prepare_cuda(spec, run, config, tag);
    if (!st && layer.empty())
      return make_error(st.error());
    if (!st && verbose)
      std::fprintf(stderr, "gpubt: CUDA kernels are not traced: %s\n", st.error().c_str());
    if (!st)
      run.cuda_missing = st.error();
    cuda = bool(st);
  }
  if (!layer.empty()) {
    config.spirv_path = run.dir + "/probes.spv";
    std::ofstream(config.spirv_path, std::ios::binary) << spirv->bytes;
  }
  config.results_path = run.results_path;
  config.verbose = verbose;
  config.backend = backend;
  config.host_maps = abi::host_maps_of(spec);
  if (!spec.formats.empty() && !attach) { // printf: stream the device's records as they come
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
      run.events = UniqueFd(sv[0]);
      run.child_events = UniqueFd(sv[1]);
      fcntl(sv[1], F_SETFD, 0); // the child inherits this end
      config.events_fd = sv[1];
    }
  }
  std::ofstream(run.config_path) << abi::write_agent_config(config);
  run.config = std::move(config);
  if (cuda)
    run.env.push_back({"CUDA_INJECTION64_PATH", *agent});
  run.env.push_back({"GPUBT_AGENT_CONFIG", run.config_path});
  if (!layer.empty()) {
    auto with = [](const char *var, const std::string &v) {
      const char *old = std::getenv(var);
      return old && *old ? v + ":" + old : v;
    };
    run.env.push_back({"VK_ADD_LAYER_PATH", with("VK_ADD_LAYER_PATH", layer)});
    run.env.push_back({"VK_INSTANCE_LAYERS", with("VK_INSTANCE_LAYERS", kVulkanLayerName)});
  }
  return run;
}

Status GpuRun::set_host_map_fds(const abi::ProgramSpec &spec, const std::map<int, int> &fds) {
  for (auto &h : config.host_maps) {
    auto fd = fds.find(spec.device.maps.at(h.device_map).map_index);
    h.fd = fd == fds.end() ? -1 : fd->second;
  }
  std::ofstream out(config_path, std::ios::trunc);
  out << abi::write_agent_config(config);
  out.close();
  if (!out)
    return make_error("cannot write the GPU agent's config " + config_path);
  return Ok{};
}

void export_gpu_env(const GpuRun &run) {
  for (const auto &[k, v] : run.env)
    setenv(k.c_str(), v.c_str(), 1);
}

} // namespace gpubt::runtime
