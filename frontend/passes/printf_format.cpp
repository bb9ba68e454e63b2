// A small scanner for %[flags][width][.precision][length]conversion.
#include "frontend/passes/printf_format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace gpubt::frontend {
namespace {

// Digits at I, advancing I; saturates rather than overflows (the checker bounds it).
int64_t read_number(std::string_view f, size_t &i) {
  int64_t v = 0;
  for (; i < f.size() && std::isdigit(static_cast<unsigned char>(f[i])); ++i)
    v = std::min<int64_t>(v * 10 + (f[i] - '0'), int64_t(1) << 40);
  return v;
}

} // namespace

std::vector<FormatSpec> parse_printf_format(std::string_view f) {
  std::vector<FormatSpec> specs;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%')
      continue;
    size_t start = i++;
    if (i < f.size() && f[i] == '%')
      continue;
    while (i < f.size() && std::strchr("-+ #0", f[i]))
      ++i;
    int64_t width = read_number(f, i), precision = 0;
    if (i < f.size() && f[i] == '.')
      precision = read_number(f, ++i);
    size_t length_start = i;
    while (i < f.size() && std::strchr("hlLjzt", f[i]))
      ++i;
    if (i >= f.size())
      break;
    char c = f[i];
    std::string text(f.substr(start, i - start + 1));
    std::string name = "%" + std::string(f.substr(length_start, i - length_start + 1));
    if (std::strchr("diuoxXcp", c))
      specs.push_back({text, name, c, FormatArg::Integer, width, precision});
    else if (c == 's')
      specs.push_back({text, name, c, FormatArg::String, width, precision});
    else if (c == 'g' && i + 1 < f.size() && f[i + 1] == 'r') { // %gr: GFP flags (bpftrace head)
      ++i;
      specs.push_back({text + 'r', name + 'r', c, FormatArg::Integer, width, precision});
    }
    else if (c == 'r') { // %r, and %rx (every byte escaped) / %rh (hex bytes)
      if (i + 1 < f.size() && (f[i + 1] == 'x' || f[i + 1] == 'h')) {
        ++i;
        text += f[i];
        name += f[i];
      }
      specs.push_back({text, name, c, FormatArg::Buffer, width, precision});
    }
    else
      --i; // not a conversion: rescan from here
  }
  return specs;
}

} // namespace gpubt::frontend
