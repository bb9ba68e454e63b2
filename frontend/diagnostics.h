// Errors and warnings as data, rendered the way bpftrace prints them:
//   stdin:1:36-44: ERROR: count() takes no arguments, got 1
//   <source line>
//   <~~~ under the span>
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "frontend/source.h"

namespace gpubt::frontend {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity;
  SourceSpan span; // may be invalid: then only "name: ERROR: msg" is printed
  std::string message;
};

class Diagnostics {
public:
  void error(const SourceSpan &span, std::string message);
  void warning(const SourceSpan &span, std::string message);
  bool has_errors() const { return errors_ > 0; }
  const std::vector<Diagnostic> &all() const { return items_; }
  // Renders every diagnostic in order. Exactly bpftrace's layout.
  void render(std::ostream &out, const SourceFile &file) const;
  std::string render(const SourceFile &file) const;

private:
  std::vector<Diagnostic> items_;
  int errors_ = 0;
};

} // namespace gpubt::frontend
