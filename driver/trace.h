// The run half of the pipeline: options -> run options -> runtime/run's tracer -> exit status.
#pragma once
#include <ostream>

#include "driver/options.h"
#include "runtime/abi/program_spec.h"
#include "runtime/run/run_options.h"

namespace gpubt::driver {

// Returns the process exit status (0 on a normal end, also after SIGINT/SIGTERM).
int trace(const abi::ProgramSpec &spec, const Options &options, std::ostream &out,
          std::ostream &err);

runtime::RunOptions run_options(const Options &options);

// GPUBT_OUTPUT_STYLE: bpftrace 0.17's text layout (0.17, the default) or bpftrace head's (head),
// which also types comparisons and integer literals as head does (SemanticOptions::head_types).
Result<runtime::OutputStyle> output_style();

// With -f json (a machine-readable format) on stdout, the -c program's stdout goes to gpubt's
// stderr: stdout carries JSON lines only (`gpubt -f json -c ./app | jq` works). With -o FILE
// it is left alone.
bool child_stdout_to_stderr(const Options &options);

} // namespace gpubt::driver
