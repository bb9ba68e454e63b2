// A script's text and the spans AST nodes and diagnostics point into.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubt::frontend {

// 1-based line and column; end_col is one past the last character (bpftrace's "1:36-44").
struct SourceSpan {
  uint32_t line = 0, col = 0;
  uint32_t end_line = 0, end_col = 0;
  uint8_t file = 0; // 0: the script; kStdlibFile (stdlib_macros.h): gpubt's stdlib macros
  bool valid() const { return line != 0; }
  static SourceSpan merge(const SourceSpan &a, const SourceSpan &b);
};

class SourceFile {
public:
  // name is "stdin" for -e programs (as bpftrace), else the path given.
  SourceFile(std::string name, std::string text);
  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  std::string_view line(uint32_t n) const; // 1-based, without the newline; empty if out of range

private:
  std::string name_, text_;
  std::vector<size_t> line_starts_;
};

} // namespace gpubt::frontend
