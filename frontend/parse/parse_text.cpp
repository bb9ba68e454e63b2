// parse_text: lexes bytes (not UTF-8, so columns are bytes as in bpftrace) and stops at the first
// syntax error; nesting deeper than the AST may be is refused before ANTLR recurses into it.
#include "frontend/parse/parse_text.h"

#include "frontend/parse/ast_builder.h"
#include "frontend/parse/syntax_errors.h"

namespace gpubt::frontend::parse {
namespace {

// Every byte is one character: arbitrary bytes never fail to decode and offsets stay bytes.
class ByteStream : public antlr4::ANTLRInputStream {
public:
  explicit ByteStream(const std::string &text) {
    _data.reserve(text.size());
    for (unsigned char c : text)
      _data.push_back(c);
    p = 0;
  }
};

std::string too_deep_message() {
  return "nesting too deep (more than " + std::to_string(kMaxNesting) + " levels)";
}

// Brackets nested deeper than the AST may be are refused before ANTLR recurses into them.
bool check_nesting(const std::string &s, Diagnostics &diags) {
  int depth = 0;
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < s.size(); ++i, ++col) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      col = 0;
    } else if (c == '"') { // skip a string literal; it ends at its quote or the line
      for (++i, ++col; i < s.size() && s[i] != '"' && s[i] != '\n'; ++i, ++col)
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] != '\n')
          ++i, ++col;
      if (i < s.size() && s[i] == '\n')
        --i, --col;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i + 1 < s.size() && s[i + 1] != '\n')
        ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        diags.error({line, col, line, col + 1}, too_deep_message());
        return false;
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

struct TooDeep {
  const antlr4::Token *at;
};

// The bracket pre-scan cannot see every recursion (`!!!...1`, `(int8)(int8)...1`, `a ? b : c ?
// ...`, else-if chains), so every rule entry checks how much stack the descent has used and
// stops with "nesting too deep" well before the stack ends. The AST builder's 1000-level limit
// then gives the same error for anything shallower that later passes could not walk.
class DepthGuardedParser : public gpubt_parse::GpubtParser {
public:
  DepthGuardedParser(antlr4::TokenStream *tokens, size_t budget)
      : GpubtParser(tokens), base_(stack_position()), budget_(budget) {}

  void enterRule(antlr4::ParserRuleContext *ctx, size_t state, size_t rule) override {
    check_depth();
    GpubtParser::enterRule(ctx, state, rule);
  }
  void enterRecursionRule(antlr4::ParserRuleContext *ctx, size_t rule) override {
    check_depth();
    GpubtParser::enterRecursionRule(ctx, rule);
  }
  void enterRecursionRule(antlr4::ParserRuleContext *ctx, size_t state, size_t rule,
                          int precedence) override {
    check_depth();
    GpubtParser::enterRecursionRule(ctx, state, rule, precedence);
  }

private:
  static uintptr_t stack_position() {
    volatile char here = 0;
    return reinterpret_cast<uintptr_t>(&here);
  }
  void check_depth() {
    uintptr_t now = stack_position();
    if (now < base_ && base_ - now > budget_)
      throw TooDeep{getCurrentToken()};
  }
  uintptr_t base_;
  size_t budget_;
};

antlr4::ParserRuleContext *start(gpubt_parse::GpubtParser &parser, StartRule rule) {
  if (rule == StartRule::Program)
    return parser.program();
  return parser.importedScript();
}

void parse_into(ParsedText &out, const std::string &text, StartRule rule, size_t stack_budget,
                Diagnostics &diags) {
  if (!check_nesting(text, diags))
    return;
  out.input = std::make_unique<ByteStream>(text);
  out.lexer = std::make_unique<gpubt_parse::GpubtLexer>(out.input.get());
  out.lexer->removeErrorListeners();
  out.tokens = std::make_unique<antlr4::CommonTokenStream>(out.lexer.get());
  auto guarded = std::make_unique<DepthGuardedParser>(out.tokens.get(), stack_budget);
  auto &parser = *guarded;
  out.parser = std::move(guarded);
  parser.removeErrorListeners();
  // Two stages, as ANTLR advises: SLL prediction is exact for almost every input and far
  // cheaper; only if it fails is the script parsed again with full LL, reporting the error.
  auto *interp = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  interp->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    try {
      out.tree = start(parser, rule);
    } catch (const antlr4::ParseCancellationException &) {
      out.tokens->seek(0);
      parser.reset();
      interp->setPredictionMode(antlr4::atn::PredictionMode::LL);
      parser.setErrorHandler(std::make_shared<FirstErrorStrategy>(text, *out.tokens, diags));
      try {
        out.tree = start(parser, rule);
      } catch (const antlr4::ParseCancellationException &) {
        out.tree = nullptr; // the strategy reported the error
      }
    }
  } catch (const TooDeep &deep) {
    uint32_t line = deep.at ? deep.at->getLine() : 1;
    uint32_t col = deep.at ? deep.at->getCharPositionInLine() + 1 : 1;
    diags.error({line, col, line, col + 1}, too_deep_message());
    out.tree = nullptr;
  }
  if (diags.has_errors())
    out.tree = nullptr;
}

} // namespace

std::unique_ptr<ParsedText> parse_text(const std::string &text, StartRule rule, uint8_t file,
                                       size_t stack_budget, Diagnostics &diags) {
  auto out = std::make_unique<ParsedText>();
  Diagnostics local; // this file's errors, told from others' by SourceSpan::file
  parse_into(*out, text, rule, stack_budget, local);
  for (auto d : local.all()) {
    d.span.file = file;
    if (d.severity == Severity::Error)
      diags.error(d.span, d.message);
    else
      diags.warning(d.span, d.message);
  }
  return out;
}

} // namespace gpubt::frontend::parse
