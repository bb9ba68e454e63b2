// Whether a builtin may be read in a probe at one of its attach points: the builtin table's
// providers, and the rules that depend on the point itself (a uretprobe's saved args, argN's
// limits, bank_conflicts in a probe narrowed to global or local memory).
#pragma once
#include <optional>
#include <string>

#include "frontend/ast.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {

// The error for B (resolved: B.id set) read in a probe at AP, or none.
std::optional<std::string> builtin_error_at(const BuiltinExpr &b, const AttachPoint &ap,
                                            const SemanticOptions &options);

} // namespace gpubt::frontend
