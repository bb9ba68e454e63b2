// The files and environment of a gpu run (see gpu_inject.h), from the injectors the program has
// code for and that are installed (injector.h).
#include "runtime/gpu/gpu_inject.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/device_abi.h"
#include "runtime/gpu/injector.h"
#include "runtime/process/owned_temp_dir.h"

namespace gpubt::runtime {

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

GpuRun::GpuRun(GpuRun &&o) noexcept
    : dir(std::move(o.dir)), dir_lock(std::move(o.dir_lock)), config_path(std::move(o.config_path)),
      results_path(std::move(o.results_path)), env(std::move(o.env)), events(std::move(o.events)),
      child_events(std::move(o.child_events)), config(std::move(o.config)),
      warnings(std::move(o.warnings)), without_results(std::move(o.without_results)) {
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

namespace {

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

namespace {

struct Found {
  std::unique_ptr<Injector> injector;
  Result<std::string> installed;
};

// The injectors the program has code for (and that can attach, when attaching), each with
// where it is installed or why it is not.
std::vector<Found> find_injectors(const abi::ProgramSpec &spec, bool attach) {
  std::vector<Found> found;
  for (auto make : {make_cuda_injector, make_vulkan_injector}) {
    auto injector = make();
    if (!injector->has_code(spec) || (attach && !injector->can_attach()))
      continue;
    auto installed = injector->find();
    found.push_back({std::move(injector), std::move(installed)});
  }
  return found;
}

// A private folder for the run's config and results.
Result<GpuRun> new_run() {
  auto tmp = make_owned_temp_dir("gpubt-gpu-");
  if (!tmp)
    return make_error(tmp.error());
  GpuRun run;
  run.dir = tmp->path;
  run.dir_lock = std::move(tmp->lock);
  run.config_path = run.dir + "/agent.cfg";
  run.results_path = run.dir + "/results.bin";
  return run;
}

// An error when a probe of SPEC is at a point INJECTOR cannot insert at.
Status unsupported_point(const Injector &injector, const abi::ProgramSpec &spec) {
  for (const auto &p : spec.device.probes)
    if (!injector.supports(p.point))
      return make_error(p.name + ": " + injector.traces() + " have no " +
                        abi::probe_point_name(p.point.kind) + " probe point" +
                        (p.point.kind == abi::ProbePointKind::MemoryAccess ||
                                 p.point.kind == abi::ProbePointKind::Barrier
                             ? " (memory-access and barrier probes run in CUDA kernels, under "
                               "--gpu-backend ptx or sass)"
                             : ""));
  return Ok{};
}

std::string join(const std::vector<std::string> &a, const std::vector<std::string> &b) {
  std::string s;
  for (const auto *parts : {&a, &b})
    for (const auto &p : *parts)
      s += (s.empty() ? "" : ", and ") + p;
  return s;
}

} // namespace

Result<GpuRun> prepare_listing_run() {
  auto vulkan = make_vulkan_injector();
  auto installed = vulkan->find();
  if (!installed)
    return make_error(installed.error());
  remove_abandoned_temp_dirs("gpubt-gpu-");
  auto made = new_run();
  if (!made)
    return make_error(made.error());
  GpuRun run = std::move(*made);
  run.config.list_kernels = true;
  run.config.results_path = run.results_path;
  vulkan->add_environment(*installed, run.env);
  run.env.push_back({"GPUBT_AGENT_CONFIG", run.config_path});
  std::ofstream out(run.config_path);
  out << abi::write_agent_config(run.config);
  out.close();
  if (!out)
    return make_error("cannot write the Vulkan layer's config " + run.config_path);
  return run;
}

bool has_launch_probes(const abi::ProgramSpec &spec) {
  return std::any_of(spec.probes.begin(), spec.probes.end(),
                     [](const abi::ProbeSpec &p) { return p.kind == abi::AttachKind::LaunchEnd; });
}

std::string launch_probes_untimed(const std::string &traces, const std::string &part) {
  return "gpu:kretprobe /last_thread/ probes that read only launch-level values run in gpubt "
         "from the CUDA agent's launch records: " + traces + " do not run them (gpubt's " + part +
         " part does not time its submissions; GPUBT_LAUNCH_PROBES=device keeps such probes in "
         "the shaders)";
}

Result<GpuRun> prepare_gpu_run(const abi::ProgramSpec &spec, abi::GpuBackend backend,
                               bool verbose, bool attach, uint32_t live_ms,
                               bool watch_launches) {
  remove_abandoned_temp_dirs("gpubt-gpu-"); // left by a gpubt that was killed
  std::vector<Found> found = find_injectors(spec, attach);
  size_t usable = 0;
  for (const auto &f : found)
    usable += bool(f.installed);
  if (usable == 0) { // the last one's reason first: "the Vulkan layer is missing; nor is ..."
    std::string why = found.empty() ? "no GPU injector has code for these probes"
                                    : found.back().installed.error();
    for (size_t i = found.size(); i-- > 1;)
      why += std::string("; nor is there a ") + found[i - 1].injector->name() +
             " agent: " + found[i - 1].installed.error();
    return make_error(why);
  }
  for (const auto &f : found)
    if (!f.installed && verbose)
      std::fprintf(stderr, "gpubt: %s are not traced: %s\n", f.injector->traces(),
                   f.installed.error().c_str());
  auto made = new_run();
  if (!made)
    return make_error(made.error());
  GpuRun run = std::move(*made);
  abi::AgentConfig config;
  config.device = abi::device_spec_for_agent(spec.device);
  config.backend = backend;
  std::string tag =
      attach ? "a" + std::to_string(getpid()) + "_" + std::to_string(time(nullptr)) : "";
  InjectorSettings settings{backend, verbose, attach};
  // For a run without results (gpu_results.cpp): what each injector set up makes of it, then
  // what is not traced and why.
  std::vector<std::string> in_use, untraced;
  auto not_traced = [&untraced](const Found &f, const std::string &why) {
    untraced.push_back(std::string(f.injector->traces()) + " are not traced here: " + why);
  };
  for (const auto &f : found) {
    if (!f.installed) {
      not_traced(f, f.installed.error());
      continue;
    }
    if (auto st = f.injector->apply_settings(settings, config, run.warnings); !st)
      return make_error(st.error());
    auto st = unsupported_point(*f.injector, spec);
    if (st)
      st = f.injector->prepare(spec, run.dir, tag, config);
    if (!st) {
      if (usable == 1)
        return make_error(st.error());
      if (verbose)
        std::fprintf(stderr, "gpubt: %s are not traced: %s\n", f.injector->traces(),
                     st.error().c_str());
      not_traced(f, st.error());
      continue;
    }
    f.injector->add_environment(f.installed.value(), run.env);
    in_use.push_back(f.injector->no_results());
    bool hang = std::any_of(spec.probes.begin(), spec.probes.end(),
                            [](const abi::ProbeSpec &p) { return p.kind == abi::AttachKind::Hang; });
    if (hang && !f.injector->watches_launches())
      run.warnings.push_back(std::string("gpu:hang probes watch CUDA launches only: ") +
                             f.injector->traces() + " are not watched (gpubt's " +
                             f.injector->name() + " part does not track their submissions)");
    if (has_launch_probes(spec) && !f.injector->watches_launches())
      run.warnings.push_back(launch_probes_untimed(f.injector->traces(), f.injector->name()));
  }
  if (!untraced.empty())
    run.without_results = "no gpu probe reported: " + join(in_use, untraced);
  config.results_path = run.results_path;
  config.verbose = verbose;
  config.host_maps = abi::host_maps_of(spec);
  config.live_ms = live_ms;
  config.watch_launches = watch_launches && live_ms > 0;
  config.time_launches = has_launch_probes(spec) && live_ms > 0;
  config.time_launch_calls = config.time_launches && spec.launch_calls;
  // printf: stream the device's records as they come; live maps come the same way. Only for
  // probes that write records: draining the ring waits for the launch (a copy on the NULL
  // stream), which made every traced launch synchronous, and a kernel waiting on its host
  // thread never ended, whenever the script had a host printf (tools' BEGIN banners).
  bool records = spec.device.features & abi::DeviceRecords;
  if ((records || live_ms) && !attach) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
      run.events = UniqueFd(sv[0]);
      run.child_events = UniqueFd(sv[1]);
      fcntl(sv[1], F_SETFD, 0); // the child inherits this end
      if (records)
        config.events_fd = sv[1];
      if (live_ms)
        config.live_fd = sv[1];
    }
  }
  run.env.push_back({"GPUBT_AGENT_CONFIG", run.config_path}); // read by every injector
  std::ofstream(run.config_path) << abi::write_agent_config(config);
  run.config = std::move(config);
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
