// The run half of the pipeline: load, attach, BEGIN, events, END, print every map.
#pragma once
#include <ostream>

#include "driver/options.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::driver {

// Returns the process exit status (0 on a normal end, also after SIGINT/SIGTERM).
int trace(const abi::ProgramSpec &spec, const Options &options, std::ostream &out,
          std::ostream &err);

} // namespace gpubt::driver
