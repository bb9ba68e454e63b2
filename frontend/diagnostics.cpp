// Renders diagnostics in bpftrace's file:line:col-col layout with a ~~~ underline.
#include "frontend/diagnostics.h"
#include "frontend/stdlib_macros.h"

#include <algorithm>
#include <sstream>

namespace gpubt::frontend {

void Diagnostics::error(const SourceSpan &span, std::string message) {
  items_.push_back({Severity::Error, span, std::move(message)});
  ++errors_;
}

void Diagnostics::warning(const SourceSpan &span, std::string message) {
  items_.push_back({Severity::Warning, span, std::move(message)});
}

static void render_one(std::ostream &out, const SourceFile &script, const Diagnostic &d) {
  const char *sev = d.severity == Severity::Error ? "ERROR" : "WARNING";
  const SourceSpan &s = d.span;
  const SourceFile &file = s.file == kStdlibFile ? stdlib_macros() : script.file_of(s.file);
  if (!s.valid()) {
    out << file.name() << ": " << sev << ": " << d.message << "\n";
    return;
  }
  if (s.end_line > s.line) {
    out << file.name() << ":" << s.line << "-" << s.end_line << ": " << sev << ": " << d.message
        << "\n";
    return;
  }
  uint32_t end = std::max(s.end_col, s.col + 1);
  out << file.name() << ":" << s.line << ":" << s.col << "-" << end << ": " << sev << ": "
      << d.message << "\n";
  std::string_view line = file.line(s.line);
  out << line << "\n";
  std::string marks;
  for (uint32_t c = 1; c < s.col; ++c)
    marks += (c - 1 < line.size() && line[c - 1] == '\t') ? '\t' : ' ';
  marks += std::string(end - s.col, '~');
  out << marks << "\n";
}

void Diagnostics::render(std::ostream &out, const SourceFile &file) const {
  for (const auto &d : items_)
    render_one(out, file, d);
}

std::string Diagnostics::render(const SourceFile &file) const {
  std::ostringstream os;
  render(os, file);
  return os.str();
}

} // namespace gpubt::frontend
