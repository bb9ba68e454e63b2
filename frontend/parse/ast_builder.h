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

// A file besides the script whose parse trees the builder reads: its tokens are told from the
// script's by the stream they came from, and get its text and SourceSpan::file.
struct OtherFile {
  const antlr4::CharStream *input = nullptr;
  antlr4::BufferedTokenStream *tokens = nullptr;
  const std::string *text = nullptr;
  uint8_t file = 0;
};

// gpubt's stdlib macros, parsed from stdlib_macros() (frontend/stdlib_macros.h).
struct StdlibMacros {
  std::vector<gpubt_parse::GpubtParser::MacroDefContext *> defs;
  OtherFile from;
};

// A .bt file the script imports (frontend/parse/imports.h): its probes, macros and map
// declarations join the script's, ahead of them, as if written where it is imported.
struct ImportedScript {
  gpubt_parse::GpubtParser::ImportedScriptContext *tree = nullptr;
  OtherFile from;
};

// Returns null if it reported errors.
std::unique_ptr<Program> build_ast(gpubt_parse::GpubtParser::ProgramContext *tree,
                                   antlr4::BufferedTokenStream &tokens, const std::string &source,
                                   const PositionalParams &params, Diagnostics &diags,
                                   const StdlibMacros &stdlib = {},
                                   const std::vector<ImportedScript> &imports = {});

} // namespace gpubt::frontend::parse
