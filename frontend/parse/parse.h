// Script text -> AST. Syntax errors become diagnostics in bpftrace's words; never throws.
#pragma once
#include <memory>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/source.h"

namespace gpubt::frontend {

// Returns null only if errors were reported.
std::unique_ptr<Program> parse_program(const SourceFile &file, Diagnostics &diags);

} // namespace gpubt::frontend
