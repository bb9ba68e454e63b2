// Attach points checked against this machine before anything loads, so that a misspelt
// tracepoint or function is reported at its file:line:col with a caret, and a near miss named.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

struct AttachPointStatus {
  enum Kind {
    Found,   // there, or not knowable before attaching (wildcards, libraries loaded later, ...)
    Missing, // certainly not there: MESSAGE says what
  } kind = Found;
  std::string message; // "tracepoint not found: syscalls:nonsense"
  std::string hint;    // "did you mean 'cudaMalloc'?" (may be empty)
};
using AttachPointLookup = std::function<AttachPointStatus(const AttachPoint &)>;

// A missing attach point is an error at its span; in a probe with other attach points it is a
// warning and the point is dropped, as bpftrace does for multi-attach probes.
void check_attach_points(Program &program, const AttachPointLookup &lookup, Diagnostics &diags);

} // namespace gpubt::frontend
