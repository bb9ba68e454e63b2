// errorf() and warnf() (bpftrace 0.22): a printf to stderr that reads as a diagnostic of the
// call's place, "stdin:1:9-62: ERROR: <formatted>", the source line and its caret after.
#pragma once
#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"
#include "frontend/source.h"

namespace gpubt::frontend {

// Each errorf()/warnf() call's frame in info.diagnostic_frames: the text of the diagnostic
// before and after its message. warnf() prints nothing under --no-warnings (NO_WARNINGS).
// Runs after resolve_types (call ids).
void render_diagnostic_calls(const Program &program, const SourceFile &file, bool no_warnings,
                             SemanticInfo &info);

} // namespace gpubt::frontend
