// bpftrace 0.17's -f json output: one object per line, {"type": ..., "data": ...}.
#pragma once
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "runtime/output/output.h"

namespace gpubt::runtime {

std::unique_ptr<Output> make_json_output(std::ostream &out);

// The body of a JSON string: quote, backslash, \n \r \t, other bytes <= 0x1f as \u00XX, and
// (as bpftrace 0.17, a char being signed) every byte >= 0x80 as \uXXXX of the sign-extended
// value ("\uffffffc3").
std::string json_escape(std::string_view s);

} // namespace gpubt::runtime
