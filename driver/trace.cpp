// The run half of the pipeline: gpubt's options as run options, handed to runtime/run's tracer.
#include "driver/trace.h"
#include "driver/attach_point_lookup.h"

#include "runtime/run/tracer.h"

namespace gpubt::driver {

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
  r.function_hint = gpu_function_hint;
  return r;
}

int trace(const abi::ProgramSpec &spec, const Options &options, std::ostream &out,
          std::ostream &err) {
  return runtime::Tracer(spec, run_options(options), out, err).run();
}

} // namespace gpubt::driver
