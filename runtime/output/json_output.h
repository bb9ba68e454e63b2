// bpftrace 0.17's -f json output: one object per line, {"type": ..., "data": ...}; strings are
// valid JSON whatever their bytes (escape.h). -f json-keys differs only in keyed maps.
#pragma once
#include <memory>
#include <ostream>

#include "runtime/output/output.h"

namespace gpubt::runtime {

// Joined: bpftrace's key, its arguments' text joined by "," as one JSON string (a kernel
// signature "scale(float*, int)" cannot be split back). Typed: a keyed map's data is a list of
// {"key": [one typed value per key argument], "value": ...}, in the same order.
enum class JsonKeys { Joined, Typed };

std::unique_ptr<Output> make_json_output(std::ostream &out, JsonKeys keys);

} // namespace gpubt::runtime
