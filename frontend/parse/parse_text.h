// One file's text through ANTLR: lexed as bytes, the nesting pre-check, SLL then LL prediction,
// the first syntax error in bpftrace's words. Shared by the script and the files it imports.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "GpubtLexer.h"
#include "GpubtParser.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend::parse {

enum class StartRule { Program, ImportedScript };

// Owns everything the parse tree points into; the tree lives as long as this does.
struct ParsedText {
  std::unique_ptr<antlr4::ANTLRInputStream> input;
  std::unique_ptr<gpubt_parse::GpubtLexer> lexer;
  std::unique_ptr<antlr4::CommonTokenStream> tokens;
  std::unique_ptr<gpubt_parse::GpubtParser> parser;
  antlr4::ParserRuleContext *tree = nullptr; // null when errors were reported
};

// ANTLR's recursive descent may use STACK_BUDGET bytes of the caller's stack. Errors are
// reported with SourceSpan::file = FILE.
std::unique_ptr<ParsedText> parse_text(const std::string &text, StartRule rule, uint8_t file,
                                       size_t stack_budget, Diagnostics &diags);

} // namespace gpubt::frontend::parse
