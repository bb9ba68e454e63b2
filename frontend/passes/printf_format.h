// printf format strings as bpftrace 0.17 reads them: which conversions take an argument and
// whether it must be an integer or a string. Shared by the checker and codegen.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubt::frontend {

enum class FormatArg { Integer, String, Buffer }; // Buffer: %r, %rx, %rh (buf())

struct FormatSpec {
  std::string text; // "%-5d", as written
  std::string name; // "%lld": length and conversion, what bpftrace's messages call it
  char conversion;  // 'd', 's', ...
  FormatArg arg;
  int64_t width = 0, precision = 0; // as written (0 when absent), saturated at 2^40
};

// The conversions that consume an argument, in order. "%%" and unknown conversions
// (bpftrace ignores "%f", "%z") take none.
std::vector<FormatSpec> parse_printf_format(std::string_view format);

} // namespace gpubt::frontend
