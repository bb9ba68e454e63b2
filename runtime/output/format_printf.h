// bpftrace 0.17's printf(): splits the format at its conversions and formats each piece with
// the C library, so widths, flags and integer truncation come out as bpftrace prints them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {

// One conversion bpftrace recognises: %[-][digits][.digits] then c, s, r or
// [hh|h|l|ll|j|z|t] d u o x X p. Anything else after '%' is literal text.
struct PrintfConversion {
  size_t begin = 0, end = 0; // [begin, end) in the format
  bool left = false;
  std::string width, precision; // digits as written ("05": zero padded)
  std::string length;           // "", "hh", "h", "l", "ll", "j", "z", "t"; %rx, %rh: "x", "h"
  char conv = 0;
};
std::vector<PrintfConversion> printf_conversions(const std::string &format);

// The text of one printf event; payload holds the args at their FormatArg offsets. A %s of a
// string (or a tuple) is a piece of its own, marked as the traced program's.
Message format_printf(const abi::FormatSpec &format, const uint8_t *payload, size_t size,
                      const abi::ProgramSpec &spec, const Symbolizer &symbolize);

} // namespace gpubt::runtime
