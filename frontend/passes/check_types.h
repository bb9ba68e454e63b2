// Reports what is wrong with a resolved program, in bpftrace 0.17's words and order: first
// the errors bpftrace finds in its first pass (unknown names, arity, misuse), and only if
// there are none, those of its final pass (operand types, printf, map keys), plus warnings.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/passes/resolve_types.h"
#include "frontend/passes/semantic_info.h"

namespace gpubt::frontend {

void check_types(const Program &program, const SemanticInfo &info, const SemanticOptions &options,
                 Diagnostics &diags);

// bpftrace's spelling of a type in messages: "unsigned int64", "string[2]", "count".
std::string type_name_in_messages(const Type &t);

} // namespace gpubt::frontend
