// A small scanner for %[flags][width][.precision][length]conversion.
#include "frontend/passes/printf_format.h"

#include <cctype>
#include <cstring>

namespace gpubt::frontend {

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
    while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i])))
      ++i;
    if (i < f.size() && f[i] == '.') {
      ++i;
      while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i])))
        ++i;
    }
    size_t length_start = i;
    while (i < f.size() && std::strchr("hlLjzt", f[i]))
      ++i;
    if (i >= f.size())
      break;
    char c = f[i];
    std::string text(f.substr(start, i - start + 1));
    std::string name = "%" + std::string(f.substr(length_start, i - length_start + 1));
    if (std::strchr("diuoxXcp", c))
      specs.push_back({text, name, c, FormatArg::Integer});
    else if (c == 's')
      specs.push_back({text, name, c, FormatArg::String});
    else
      --i; // not a conversion: rescan from here
  }
  return specs;
}

} // namespace gpubt::frontend
