// One way of putting gpu probes into a program, behind one interface: CUDA (the agent loaded
// with CUDA_INJECTION64_PATH, runtime/gpu/cuda/) and Vulkan (the layer that links the probes'
// SPIR-V into compute shaders, runtime/gpu/vulkan/). A run (gpu_inject.h) shares one folder,
// agent config, events socket and results format between them; each injector adds its files,
// its settings and its environment. A new GPU API is one more injector here and one target.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/probe_point.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::runtime {

// gpubt's gpu settings, as the user gave them.
struct InjectorSettings {
  abi::GpuBackend backend = abi::GpuBackend::Auto; // --gpu-backend
  bool verbose = false;
  bool attach = false; // into running processes (no -c)
};

using Environment = std::vector<std::pair<std::string, std::string>>;

class Injector {
public:
  virtual ~Injector() = default;
  virtual const char *name() const = 0;   // "CUDA", "Vulkan": in messages
  virtual const char *traces() const = 0; // "CUDA kernels": what it puts probes into
  // Whether the compiled program has code for it (CUDA: the PTX; Vulkan: a SPIR-V image).
  virtual bool has_code(const abi::ProgramSpec &spec) const = 0;
  // Whether it can attach to processes already running; else it works from a program's start.
  virtual bool can_attach() const = 0;
  // Whether its in-process part sends the launches running now (AgentConfig::watch_launches:
  // gpu:hang probes, --metrics' running kernel age).
  virtual bool watches_launches() const = 0;
  // The probe points its inserter puts probes at (both: entry and exit). A program with a probe
  // at another one leaves what it traces untraced, said as a missing part is.
  virtual bool supports(const abi::ProbePoint &point) const = 0;
  // What a run in which its in-process part reported nothing may mean, for the user ("no Vulkan
  // program used gpubt's layer").
  virtual const char *no_results() const = 0;
  // SETTINGS as it applies them, into CONFIG: a setting it cannot honour is an error; one it
  // does not use is a warning in WARNINGS, never ignored silently.
  virtual Status apply_settings(const InjectorSettings &settings, abi::AgentConfig &config,
                                std::vector<std::string> &warnings) const = 0;
  // Where its in-process part is installed, or what the user is told when it is not there.
  virtual Result<std::string> find() const = 0;
  // Writes its files into DIR and names them in CONFIG. TAG (attaching): the probe functions'
  // names get it, as a process keeps the probe code of every earlier session loaded.
  virtual Status prepare(const abi::ProgramSpec &spec, const std::string &dir,
                         const std::string &tag, abi::AgentConfig &config) const = 0;
  // The environment that loads it into a program started from now on (INSTALLED: find()'s).
  virtual void add_environment(const std::string &installed, Environment &env) const = 0;
};

std::unique_ptr<Injector> make_cuda_injector();
std::unique_ptr<Injector> make_vulkan_injector();

// The program's folder (where gpubt is), for finding what is installed beside it.
std::string self_dir();
bool is_file(const std::string &path);

} // namespace gpubt::runtime
