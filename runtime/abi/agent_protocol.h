// What gpubt and the in-process GPU agent (runtime/cuda_agent) exchange: a text config file the
// agent reads at start (GPUBT_AGENT_CONFIG) and a binary results file it writes at exit. Std only:
// the agent compiles agent_protocol.cpp itself and links nothing else of gpubt.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::abi {

struct AgentCubin {
  std::string arch; // "sm_90"
  std::string path; // ptxas --compile-as-tools-patch output for that arch
  std::string ptx;  // the probe PTX for that arch (the PTX backend); empty: none
  std::string bytes; // attaching: the cubin itself, sent with the config (not in its text)
};

// Which way gpu probes get into kernels (--gpu-backend).
enum class GpuBackend { Auto, Ptx, Sass };
const char *backend_name(GpuBackend b);
bool parse_backend(const std::string &name, GpuBackend &out);

// What gpubt tells the agent. Every field is one directive of the config text; the list of
// them, which both write_agent_config and parse_agent_config walk, is in agent_protocol.cpp.
struct AgentConfig {
  // The probes, their maps, the printf ring's size and the features the compiler set. Its PTX
  // and images are not sent: they reach the agent as `cubins` and `spirv_path`. map_index is not
  // sent (the agent needs only sizes); from_host / to_host are set from host_maps when parsed.
  DeviceProgramSpec device;
  std::vector<AgentCubin> cubins;
  std::string spirv_path; // the Vulkan layer's probe module (DeviceFormat::SpirvVulkan); empty: none
  // One per DeviceMapSpec::from_host map (the BPF map the agent copies into it before each traced
  // launch) or to_host map (the BPF map the agent copies it into at each synchronization).
  struct HostMap {
    uint32_t device_map = 0;               // index into device.maps
    uint32_t key_size = 0, value_size = 0; // the BPF map's (a scalar map's key is a u64 0)
    int fd = -1;                           // the BPF map in the traced process; -1: unknown
    bool to_host = false;                  // the copy's direction: false host -> GPU
  };
  std::vector<HostMap> host_maps;
  std::string results_path;
  int events_fd = -1;   // >= 0: after each traced launch the printf ring is drained to this
                        // (inherited) socket as raw records; otherwise only at the end
  bool verbose = false; // the agent says what it patches and sets
  // > 0: the agent sends the device maps every LIVE_MS ms while the program runs (live_maps.h):
  // to live_fd (an inherited socket, -c; maybe events_fd's), or on the control socket.
  uint32_t live_ms = 0;
  int live_fd = -1;
  // With live_ms: the agent watches its launches and sends which run now every live period
  // (running_launches.h): gpu:hang probes, --metrics' running kernel age.
  bool watch_launches = false;
  // With live_ms: the agent times every launch (its start and end on the GPU, CLOCK_MONOTONIC)
  // and, once it finished, sends it in a FinishedLaunches record (finished_launches.h) to live_fd
  // or the control socket, at the latest one live period later: the script has launch-level
  // gpu:kretprobe probes (AttachKind::LaunchEnd), which gpubt runs once per launch. No exit
  // patch: the launch is timed as a whole (CUPTI, runtime/cuda_agent/launch_timer.h: only in a
  // -c run with no device probe, where the agent never subscribes the Compute Sanitizer).
  bool time_launches = false;
  // With time_launches: each launch's call time too (ProgramSpec::launch_calls).
  bool time_launch_calls = false;
  // Auto: a module with PTX the GPU can JIT gets the probes compiled into its PTX, others are
  // patched in SASS; Ptx / Sass: only that way (a module it cannot do runs uninstrumented).
  GpuBackend backend = GpuBackend::Auto;
  // -l 'gpu:*' -c CMD: no probes; the results name every kernel the program loaded (`kernels`).
  bool list_kernels = false;

  // A probe reads %globaltimer (nsecs): the agent measures the GPU clock.
  bool reads_clock() const { return device.features & DeviceReadsClock; }
};

// The part of SPEC's device program the agent is told (no PTX or images).
DeviceProgramSpec device_spec_for_agent(const DeviceProgramSpec &spec);

// SPEC's from_host and to_host device maps with their BPF maps' sizes (fd -1: gpubt fills it at
// run time).
std::vector<AgentConfig::HostMap> host_maps_of(const ProgramSpec &spec);

std::string write_agent_config(const AgentConfig &config);
Result<AgentConfig> parse_agent_config(const std::string &text);

// What one CUDA context's device memory held at its end (context destroy or process exit).
struct DeviceImage {
  int32_t device = -1;                    // CUDA device ordinal
  std::vector<uint64_t> probe_launches;   // per probe: launches of kernels it matched
  std::vector<std::vector<uint8_t>> maps; // per DeviceMapSpec: header + entries (device_abi.h)
  std::vector<uint8_t> ring_records;      // printf records drained, in order
  uint64_t ring_drops = 0;
};
// The agent's own threads in a traced process are named so ("gpubt-clock", "gpubt-control"):
// host probes on the GPU API libraries skip them, since their CUDA calls are gpubt's.
inline constexpr char kAgentThreadPrefix[] = "gpubt-";

struct AgentResults {
  std::vector<DeviceImage> images;
  std::vector<std::string> messages; // why something was not traced (the agent printed them too)
  // Kernels whose device name was shortened (kernel_name.h): that name -> the full one. Written
  // after the rest, so results of an agent older than this gpubt still parse.
  std::map<std::string, std::string> kernel_names;
  // Modules (CUDA) or entry points (Vulkan) the probes matched that ran without them (not
  // patched, past the layer's entry point limit): gpubt's "partially traced" exit status. After
  // the kernel names, for the same reason.
  uint64_t untraced = 0;
  // The kernels (Vulkan: compute entry points and pipeline names) the program loaded, when a
  // probe matched none of them (for "did you mean"), or when the config asked (list_kernels). After the untraced count, for the same reason.
  std::set<std::string> kernels;
};

// Whether one of PROBES probes ran in no launch of any of IMAGES (whose kernels are then worth
// sending for "did you mean").
bool some_probe_unmatched(const std::vector<DeviceImage> &images, size_t probes);

std::string write_agent_results(const AgentResults &results);
// IMAGES alone as results whose map images are sparse (only their words not all zero: live maps,
// sent every period); parse_agent_results reads both.
std::string write_sparse_images(const std::vector<DeviceImage> &images);
Result<AgentResults> parse_agent_results(std::string_view bytes);

} // namespace gpubt::abi
