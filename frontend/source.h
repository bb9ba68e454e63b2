// A script's text and the spans AST nodes and diagnostics point into.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpubt::frontend {

constexpr uint8_t kFirstImportedFile = 2;

// 1-based line and column; end_col is one past the last character (bpftrace's "1:36-44").
struct SourceSpan {
  uint32_t line = 0, col = 0;
  uint32_t end_line = 0, end_col = 0;
  // 0: the script; kStdlibFile (stdlib_macros.h): gpubt's stdlib macros; from
  // kFirstImportedFile on: the files the script imports, in SourceFile::imported's order.
  uint8_t file = 0;
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

  // The files this script imports (`import "x.bt";`, at any depth), kept here so that
  // diagnostics can show their lines. add_import returns the new file's SourceSpan::file, or 0
  // when no more numbers are left.
  uint8_t add_import(SourceFile imported);
  // The file a SourceSpan::file of this script's program names: this one or an import (never
  // the stdlib's, which the caller tells by kStdlibFile). Stays where it is as imports are added.
  const SourceFile &file_of(uint8_t file) const;

private:
  std::string name_, text_;
  std::vector<std::shared_ptr<const SourceFile>> imported_;
  std::vector<size_t> line_starts_;
};

} // namespace gpubt::frontend
