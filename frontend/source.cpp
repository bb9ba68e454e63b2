// Line index over a script's text.
#include "frontend/source.h"

#include <algorithm>

namespace gpubt::frontend {

SourceSpan SourceSpan::merge(const SourceSpan &a, const SourceSpan &b) {
  if (!a.valid())
    return b;
  if (!b.valid())
    return a;
  SourceSpan s = a;
  if (b.line < s.line || (b.line == s.line && b.col < s.col)) {
    s.line = b.line;
    s.col = b.col;
  }
  if (b.end_line > s.end_line || (b.end_line == s.end_line && b.end_col > s.end_col)) {
    s.end_line = b.end_line;
    s.end_col = b.end_col;
  }
  return s;
}

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n')
      line_starts_.push_back(i + 1);
}

uint8_t SourceFile::add_import(SourceFile imported) {
  if (imported_.size() + kFirstImportedFile > UINT8_MAX)
    return 0;
  imported_.push_back(std::make_shared<const SourceFile>(std::move(imported)));
  return uint8_t(imported_.size() - 1 + kFirstImportedFile);
}

const SourceFile &SourceFile::file_of(uint8_t file) const {
  size_t i = file - kFirstImportedFile;
  return file >= kFirstImportedFile && i < imported_.size() ? *imported_[i] : *this;
}

std::string_view SourceFile::line(uint32_t n) const {
  if (n == 0 || n > line_starts_.size())
    return {};
  size_t begin = line_starts_[n - 1];
  size_t end = n < line_starts_.size() ? line_starts_[n] - 1 : text_.size();
  std::string_view v(text_.data() + begin, end - begin);
  if (!v.empty() && v.back() == '\r')
    v.remove_suffix(1);
  return v;
}

} // namespace gpubt::frontend
