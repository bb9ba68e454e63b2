// Positional parameters ($1.., $#): the words after the script on gpubt's command line. As in
// bpftrace they are constants of the program: substituted while the AST is built.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpubt::frontend::parse {

struct PositionalParams {
  std::vector<std::string> values;

  // $n's text; a missing one is "0" used as a number and "" inside str().
  std::string get(size_t n, bool in_str) const;
  // $n as a number (decimal, 0x hex or 0 octal, as strtoll base 0), if it is one.
  std::optional<int64_t> number(size_t n) const;
  // An attach point's `$n` outside double quotes replaced by $n's text.
  std::string substitute(const std::string &attach_point) const;
};

} // namespace gpubt::frontend::parse
