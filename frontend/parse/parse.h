// Script text -> AST. Syntax errors become diagnostics in bpftrace's words; never throws.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/source.h"

namespace gpubt::frontend {

// Returns null only if errors were reported.
// `params` are the positional parameters $1.. (the words after the script on the command line).
// The files the script imports are added to `file` (SourceFile::add_import), where diagnostics
// find their lines; imports resolve from the directory of file.name().
std::unique_ptr<Program> parse_program(SourceFile &file, Diagnostics &diags,
                                       const std::vector<std::string> &params = {});

} // namespace gpubt::frontend
