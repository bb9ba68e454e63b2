// Parse tree -> AST, with the checks the grammar leaves to it: assignment targets, literal
// values, attach points, positional parameters and nesting depth.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "GpubtParser.h"
#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/parse/positional_params.h"

namespace gpubt::frontend::parse {

// Deeper expressions or blocks are an error: later passes recurse over the tree.
constexpr int kMaxNesting = 1000;

// gpubt's stdlib macros, parsed from stdlib_macros() (frontend/stdlib_macros.h): their
// definitions, and the stream their tokens came from, to tell them from the script's.
struct StdlibMacros {
  std::vector<gpubt_parse::GpubtParser::MacroDefContext *> defs;
  const antlr4::CharStream *input = nullptr;
};

// Returns null if it reported errors.
std::unique_ptr<Program> build_ast(gpubt_parse::GpubtParser::ProgramContext *tree,
                                   antlr4::BufferedTokenStream &tokens, const std::string &source,
                                   const PositionalParams &params, Diagnostics &diags,
                                   const StdlibMacros &stdlib = {});

} // namespace gpubt::frontend::parse
