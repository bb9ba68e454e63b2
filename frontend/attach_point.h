// Attach point text ("host:uprobe:./app:foo*", "interval:ms:100", "gpu:kretprobe:vectorAdd")
// -> the AttachPoint fields. Errors use bpftrace's words and point at the attach point.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// Reads ap.raw and ap.span; fills provider, host_prefix, target, func, interval_ns.
// Returns false after reporting an error.
bool parse_attach_point(AttachPoint &ap, Diagnostics &diags);

} // namespace gpubt::frontend
