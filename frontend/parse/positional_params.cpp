// Positional parameters: bpftrace's get_param/is_numeric rules and attach point substitution.
#include "frontend/parse/positional_params.h"

#include <cerrno>
#include <cstdlib>

namespace gpubt::frontend::parse {

std::string PositionalParams::get(size_t n, bool in_str) const {
  if (n == 0 || n > values.size())
    return in_str ? "" : "0";
  return values[n - 1];
}

std::optional<int64_t> PositionalParams::number(size_t n) const {
  std::string s = get(n, false);
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  // std::stoll (bpftrace) skips leading blanks and refuses out-of-range values.
  if (*end || errno == ERANGE || end == s.c_str())
    return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string PositionalParams::substitute(const std::string &raw) const {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '"')
      quoted = !quoted;
    size_t j = i + 1;
    while (j < raw.size() && raw[j] >= '0' && raw[j] <= '9')
      ++j;
    if (c == '$' && !quoted && j > i + 1) {
      out += get(std::strtoull(raw.substr(i + 1, j - i - 1).c_str(), nullptr, 10), true);
      i = j - 1;
      continue;
    }
    out += c;
  }
  return out;
}

} // namespace gpubt::frontend::parse
