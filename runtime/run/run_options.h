// What a trace run needs from gpubt's options: the driver fills one from the command line.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/bpf/progress.h"
#include "runtime/output/output.h"
#include "runtime/output/timeline_output.h"

namespace gpubt::runtime {

struct RunOptions {
  std::string command; // -c
  pid_t pid = -1;      // -p
  bool verbose = false;
  bool quiet = false; // -q: no "Attaching N probes..."
  OutputFormat format = OutputFormat::Text;
  bool raw_strings = false;
  OutputStyle output_style = OutputStyle::Bpftrace017; // GPUBT_OUTPUT_STYLE
  // -c's stdout goes to gpubt's stderr (stdout carries a machine-readable format).
  bool child_stdout_to_stderr = false;
  std::string metrics_address; // --metrics ADDR:PORT, empty: none
  uint32_t metrics_series = 100;
  TimelineOptions timeline; // --timeline FILE (path empty: none)
  abi::GpuBackend gpu_backend = abi::GpuBackend::Auto;
  uint64_t max_probes = 512;     // BPFTRACE_MAX_PROBES
  uint64_t cat_bytes_max = 10240; // BPFTRACE_CAT_BYTES_MAX
  // How long attaching or detaching goes on before it says how far it is (GPUBT_PROGRESS_MS;
  // runtime/bpf/progress.h), unless quiet.
  uint64_t progress_after_ns = Progress::kAfterNs;
  bool print_maps_on_exit = true; // the script's config = { print_maps_on_exit = 0 } clears it
  // A hint for a uprobe function that is not there (it is in another API library, or a near
  // name): the API catalogs are the compiler's, so the driver answers. "" for none.
  std::function<std::string(const std::string &target, const std::string &func)> function_hint;
  // The same for a gpu probe's kernel NAME that no launch matched, among the KERNELS the traced
  // programs loaded ("did you mean ...?", or "" for none).
  std::function<std::string(const std::string &name, const std::vector<std::string> &kernels)>
      kernel_hint;
};

} // namespace gpubt::runtime
