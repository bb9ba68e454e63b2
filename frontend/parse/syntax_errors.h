// bpftrace's syntax error words for ANTLR's errors: "syntax error, unexpected ;, expecting }",
// spans as bison's locations print them, and an error strategy that stops at the first error.
#pragma once
#include <string>

#include "antlr4-runtime.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend::parse {

// The span bison reports for a token: bpftrace's lexer only moves a location's start past
// blanks and comments, so it starts where the run of adjacent tokens holding `t` starts.
SourceSpan bison_span(antlr4::BufferedTokenStream &tokens, const antlr4::Token *t);
// Exactly the token's characters.
SourceSpan token_span(const antlr4::Token *t);

// How bison names a token in "unexpected X": ";", "identifier", "builtin", "end of file", ...
std::string token_word(const antlr4::Token *t, const std::string &source);

// Reports the first syntax error into diags in bpftrace's words, then cancels the parse
// (throws antlr4::ParseCancellationException).
class FirstErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  FirstErrorStrategy(const std::string &source, antlr4::BufferedTokenStream &tokens,
                     Diagnostics &diags)
      : source_(source), tokens_(tokens), diags_(diags) {}
  void reportError(antlr4::Parser *parser, const antlr4::RecognitionException &e) override;
  void recover(antlr4::Parser *parser, std::exception_ptr e) override;
  antlr4::Token *recoverInline(antlr4::Parser *parser) override;
  void sync(antlr4::Parser *parser) override;

private:
  const std::string &source_;
  antlr4::BufferedTokenStream &tokens_;
  Diagnostics &diags_;
  bool reported_ = false;
};

} // namespace gpubt::frontend::parse
