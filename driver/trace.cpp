// The run half of the pipeline: gpubt's options as run options, handed to runtime/run's tracer.
#include "driver/trace.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "driver/attach_point_lookup.h"
#include "driver/exit_codes.h"
#include "frontend/nearest_name.h"
#include "runtime/bpf/progress.h"
#include "runtime/run/tracer.h"

namespace gpubt::driver {
namespace {

// GPUBT_PROGRESS_MS: how long attaching or detaching goes on before it says how far it is.
Result<uint64_t> attach_progress_after_ns() {
  const char *v = std::getenv("GPUBT_PROGRESS_MS");
  if (!v)
    return runtime::Progress::kAfterNs;
  char *end = nullptr;
  errno = 0;
  unsigned long long ms = std::strtoull(v, &end, 10);
  if (!*v || *end || errno || *v == '-' || ms > UINT64_MAX / 1'000'000)
    return make_error(std::string("GPUBT_PROGRESS_MS='") + v + "' is not a number of milliseconds");
  return uint64_t(ms) * 1'000'000;
}

} // namespace

// GPUBT_OUTPUT_STYLE: bpftrace 0.17's text layout (0.17, the default) or bpftrace head's (head).
Result<runtime::OutputStyle> output_style() {
  const char *v = std::getenv("GPUBT_OUTPUT_STYLE");
  if (!v || std::string_view(v) == "0.17")
    return runtime::OutputStyle::Bpftrace017;
  if (std::string_view(v) == "head")
    return runtime::OutputStyle::BpftraceHead;
  return make_error(std::string("GPUBT_OUTPUT_STYLE='") + v + "' is neither '0.17' nor 'head'");
}


bool child_stdout_to_stderr(const Options &options) {
  return runtime::is_machine_readable(options.format) && options.output_path.empty();
}

runtime::RunOptions run_options(const Options &options) {
  runtime::RunOptions r;
  r.command = options.child_command;
  r.pid = options.pid;
  r.verbose = options.verbose;
  r.quiet = options.bt.quiet;
  r.format = options.format;
  r.raw_strings = options.raw_strings;
  r.child_stdout_to_stderr = child_stdout_to_stderr(options);
  r.metrics_address = options.metrics_address;
  r.metrics_series = options.metrics_series;
  r.timeline = options.timeline;
  r.gpu_backend = options.gpu_backend;
  r.max_probes = options.env.max_probes;
  r.cat_bytes_max = options.env.cat_bytes_max;
  r.function_hint = [pid = options.pid](const std::string &target, const std::string &func) {
    return uprobe_function_hint(target, func, pid);
  };
  r.kernel_hint = [](const std::string &name, const std::vector<std::string> &kernels) {
    return frontend::did_you_mean_hint(frontend::nearest_names(name, kernels, 3));
  };
  r.print_maps_on_exit = options.print_maps_on_exit;
  return r;
}

int trace(const abi::ProgramSpec &spec, const Options &options, std::ostream &out,
          std::ostream &err) {
  runtime::RunOptions r = run_options(options);
  auto progress_after = attach_progress_after_ns();
  if (!progress_after) {
    err << "ERROR: " << progress_after.error() << "\n";
    return ExitUserError;
  }
  r.progress_after_ns = *progress_after;
  auto style = output_style();
  if (!style) {
    err << "ERROR: " << style.error() << "\n";
    return ExitUserError;
  }
  r.output_style = *style;
  return runtime::Tracer(spec, std::move(r), out, err).run();
}

} // namespace gpubt::driver
