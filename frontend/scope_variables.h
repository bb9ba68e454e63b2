// Gives every $variable the declaration it means (VariableExpr::decl). `let` and for loop
// variables live in their block, as in bpftrace since 0.21; a variable assigned without `let`
// stays probe-wide, as in bpftrace 0.17, so that 0.17's scripts keep their meaning.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// Reports bpftrace's shadowing errors: a `let` or a loop variable whose name is already in
// scope (declared, or assigned in an enclosing block).
void scope_variables(Program &program, Diagnostics &diags);

} // namespace gpubt::frontend
