// gpubt's command-line options (bpftrace's flags, plus gpubt's own).
#pragma once
#include "driver/version.h"
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "driver/bpftrace_env.h"
#include "driver/bpftrace_flags.h"

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/result.h"
#include "runtime/output/output.h"
#include "runtime/output/timeline_output.h"

namespace gpubt::driver {

enum class EmitStage { None, Ast, Llvm, Bpf, Ptx };

struct Options {
  std::string program_text;   // from -e or the script file
  std::string program_name;   // "stdin" for -e, else the path
  std::string child_command;  // -c
  pid_t pid = -1;             // -p
  bool list = false;          // -l
  std::string list_pattern;   // -l PATTERN
  std::string output_path;    // -o
  runtime::OutputFormat format = runtime::OutputFormat::Text;
  bool raw_strings = false;   // --raw-strings: text output leaves control characters as they are
  std::string metrics_address; // --metrics ADDR:PORT: serve the maps to Prometheus while tracing
  uint32_t metrics_series = 100; // --metrics-series N: series per map (0: no cap)
  runtime::TimelineOptions timeline; // --timeline FILE, --timeline-events N
  bool dry_run = false;
  bool print_maps_on_exit = true; // the script's config = { print_maps_on_exit = 0 } clears it
  uint32_t gpu_map_capacity = 0; // --gpu-map-capacity: slots per keyed gpu map (0: default)
  uint32_t gpu_key_spread = 32;   // --gpu-key-spread: slots per launch-uniform key (1: one)
  abi::GpuBackend gpu_backend = abi::GpuBackend::Auto; // --gpu-backend
  std::string gpu_arch;       // --gpu-arch sm_XX: the GPU `-l 'gpu:...'` lists backends for
  EmitStage emit = EmitStage::None;
  bool verbose = false;
  bool help = false, version = false;
  BpftraceFlags bt;                // bpftrace's other flags (-q, --unsafe, -k, -B, -I, -d, ...)
  BpftraceEnv env;                 // BPFTRACE_* environment variables
  std::vector<std::string> params; // positional parameters: the words after the script
};

inline constexpr char kNoProgramError[] = "USAGE: filename or -e 'program' required.";

// Parses argv. Errors are user-facing messages (usage problems, unreadable script file).
Result<Options> parse_options(int argc, char **argv);
void print_usage(std::FILE *out);
// -p's value: a decimal pid in [1, 4194304]; errors worded as bpftrace's.
Result<pid_t> parse_pid(const std::string &text);

} // namespace gpubt::driver
