// gpu probes in a -c run, host side: one folder, agent config and events socket shared by the
// injectors (injector.h: CUDA's agent, the Vulkan layer), each adding its files and the
// environment that loads it into the child; after the child exits, what they wrote: device maps
// as MapData, printf records, warnings.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/map_data.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

struct GpuRun {
  std::string dir; // private temporary folder: PTX, cubins, config, results
  UniqueFd dir_lock; // held while it runs: a later gpubt removes the folder once it is free
  std::string config_path, results_path;
  std::vector<std::pair<std::string, std::string>> env; // for the child
  // When the probes printf: the agent sends records here after each traced launch. The child's
  // end stays open (and inheritable) until close_child_end(), called once the child is forked.
  UniqueFd events, child_events;
  void close_child_end() { child_events.reset(); }
  abi::AgentConfig config; // as written to config_path
  std::vector<std::string> warnings; // settings an injector does not use (for the user)
  // When an injector is not set up (no agent built, ptxas failed, a probe point it lacks): what
  // a run without results tells the user, naming what is not traced and why rather than blame
  // the program. Empty when every injector with code is set up.
  std::string without_results;
  // The fds the child has of the BPF maps behind from_host device maps (spec map index -> fd),
  // once the session made them: the config is written again, before the child starts.
  Status set_host_map_fds(const abi::ProgramSpec &spec, const std::map<int, int> &fds);
  GpuRun() = default;
  GpuRun(GpuRun &&other) noexcept;
  GpuRun &operator=(GpuRun &&) = delete;
  ~GpuRun(); // removes dir (kept, unlocked, for an hour when GPUBT_KEEP_TEMP is set)
};

// libgpubt_agent.so: GPUBT_AGENT_PATH, else next to gpubt (or ../lib/gpubt/ from it).
Result<std::string> find_agent_library();

// The ptxas that assembles probes: GPUBT_PTXAS, else $PATH's, else /usr/local/cuda/bin/ptxas
// (which may not be there).
std::string find_ptxas();

// Finds the injectors the program has code for (CUDA: the agent, GPUBT_AGENT_PATH, else next to
// gpubt; the GPUs' architectures, GPUBT_GPU_ARCH="sm_90,...", else the CUDA driver or
// nvidia-smi, else spec.device.arch; ptxas, GPUBT_PTXAS, $PATH, /usr/local/cuda/bin. Vulkan: the
// layer), applies BACKEND through them, has each write its files and writes the agent config.
// Errors are for the user (none installed, ptxas failed where it was the only one, a setting
// refused).
// ATTACH: for agents already running (gpu_attach.h): the probe functions get names of this run's
// own (a process keeps the probe code of every earlier session loaded), no events socket, no
// results file.
// LIVE_MS > 0: the agents send the device maps that often while the program runs
// (runtime/abi/live_maps.h; -c: on run.events, made for them if the probes do not printf).
// WATCH_LAUNCHES (with LIVE_MS): the agents send their running launches as often
// (running_launches.h: gpu:hang probes, --metrics); an injector that does not watch its
// launches is said in run.warnings. With gpu:hang probes and no gpu probe, only the CUDA agent
// loads, to watch. Launch-level probes (AttachKind::LaunchEnd, with LIVE_MS) have the agents time
// every launch (AgentConfig::time_launches); the same holds for them.
// Whether SPEC has launch-level probes (AttachKind::LaunchEnd), and what is said where TRACES
// ("Vulkan compute shaders") of gpubt's PART ("Vulkan") do not run them.
bool has_launch_probes(const abi::ProgramSpec &spec);
std::string launch_probes_untimed(const std::string &traces, const std::string &part);

Result<GpuRun> prepare_gpu_run(const abi::ProgramSpec &spec, abi::GpuBackend backend,
                               bool verbose, bool attach = false, uint32_t live_ms = 0,
                               bool watch_launches = false);

// -l 'gpu:*' -c CMD: a run that instruments nothing, in which the Vulkan layer notes the names
// of the compute shaders the program makes (AgentConfig::list_kernels; collect_gpu_results'
// `kernels`). Error: the layer is not installed.
Result<GpuRun> prepare_listing_run();

// Sets run.env in this process, so that a child forked afterwards inherits it.
void export_gpu_env(const GpuRun &run);

// Renames the probe and dispatcher functions in PTX and PROBES: gpubt_probe_N ->
// gpubt_probe_TAG_N.
void tag_probe_functions(std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes,
                         const std::string &tag);

struct GpuOutcome {
  std::vector<MapData> maps;         // indexed like spec.maps; device maps merged over contexts
  std::vector<uint8_t> ring_records; // printf records (device_abi.h gpubt_ring_record), in order
  uint64_t ring_drops = 0;
  uint64_t launches = 0;             // kernel launches any gpu probe ran in, all probes together
  std::vector<std::string> warnings; // dropped map updates, the agent's messages
  std::map<std::string, std::string> kernel_names; // shortened device name -> full name
  uint64_t untraced = 0; // modules / entry points the probes matched that ran without them
  std::vector<size_t> unmatched;   // spec.device.probes no kernel launch matched
  std::set<std::string> kernels;   // the kernels the program loaded, when some probe is unmatched
};

// Reads what the agent wrote. Error: no results (the child died before exit handlers ran, or
// the agent never loaded: no CUDA context was created).
Result<GpuOutcome> collect_gpu_results(const abi::ProgramSpec &spec, const GpuRun &run);
// The same from results already read (an attached agent sent them).
GpuOutcome gpu_outcome(const abi::ProgramSpec &spec, const abi::AgentResults &results);

} // namespace gpubt::runtime
