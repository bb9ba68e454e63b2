// bpftrace 0.17's -f json output: one object per line, {"type": ..., "data": ...}; strings are
// valid JSON whatever their bytes (escape.h).
#pragma once
#include <memory>
#include <ostream>

#include "runtime/output/output.h"

namespace gpubt::runtime {

std::unique_ptr<Output> make_json_output(std::ostream &out);

} // namespace gpubt::runtime
