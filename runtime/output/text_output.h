// bpftrace 0.17's text output: "Attaching N probes...", printf as is, maps as "@m[k]: v" and
// hist tables with their 52-wide bars. The traced program's strings go through escape_control()
// unless options.raw_strings.
#pragma once
#include <memory>
#include <ostream>

#include "runtime/output/output.h"

namespace gpubt::runtime {

std::unique_ptr<Output> make_text_output(std::ostream &out, const OutputOptions &options);

} // namespace gpubt::runtime
