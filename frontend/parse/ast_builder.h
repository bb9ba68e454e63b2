// Parse tree -> AST, with the checks the grammar leaves to it: assignment targets, literal
// values, attach points, positional parameters and nesting depth.
#pragma once
#include <memory>
#include <string>

#include "GpubtParser.h"
#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/parse/positional_params.h"

namespace gpubt::frontend::parse {

// Deeper expressions or blocks are an error: later passes recurse over the tree.
constexpr int kMaxNesting = 1000;

// Returns null if it reported errors.
std::unique_ptr<Program> build_ast(gpubt_parse::GpubtParser::ProgramContext *tree,
                                   antlr4::BufferedTokenStream &tokens, const std::string &source,
                                   const PositionalParams &params, Diagnostics &diags);

} // namespace gpubt::frontend::parse
