// parse_program: lexes bytes (not UTF-8, so columns are bytes as in bpftrace), parses on a
// thread with a large stack (ANTLR's recursive descent recurses once per nesting level), stops
// at the first syntax error, then builds the AST.
#include "frontend/parse/parse.h"

#include <pthread.h>

#include "GpubtLexer.h"
#include "GpubtParser.h"
#include "frontend/parse/ast_builder.h"
#include "frontend/parse/syntax_errors.h"
#include "frontend/stdlib_macros.h"

namespace gpubt::frontend {
namespace {

constexpr size_t kParserStack = 512u << 20; // virtual; only the depth actually used is touched

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

// Brackets nested deeper than the AST may be are refused before ANTLR recurses into them.
bool check_nesting(const SourceFile &file, Diagnostics &diags) {
  const std::string &s = file.text();
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
      if (++depth > parse::kMaxNesting) {
        diags.error({line, col, line, col + 1}, "nesting too deep (more than " +
                                                    std::to_string(parse::kMaxNesting) +
                                                    " levels)");
        return false;
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

struct Job {
  const SourceFile &file;
  Diagnostics &diags;
  parse::PositionalParams params;
  std::unique_ptr<Program> result;
  size_t stack_budget; // bytes of stack ANTLR's recursive descent may use
};

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

void parse_on_this_thread(Job &job) {
  const std::string &text = job.file.text();
  ByteStream input(text);
  gpubt_parse::GpubtLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  DepthGuardedParser parser(&tokens, job.stack_budget);
  parser.removeErrorListeners();
  // Two stages, as ANTLR advises: SLL prediction is exact for almost every input and far
  // cheaper; only if it fails is the script parsed again with full LL, reporting the error.
  auto *interp = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  interp->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  gpubt_parse::GpubtParser::ProgramContext *tree = nullptr;
  try {
    try {
      tree = parser.program();
    } catch (const antlr4::ParseCancellationException &) {
      tokens.seek(0);
      parser.reset();
      interp->setPredictionMode(antlr4::atn::PredictionMode::LL);
      parser.setErrorHandler(
          std::make_shared<parse::FirstErrorStrategy>(text, tokens, job.diags));
      try {
        tree = parser.program();
      } catch (const antlr4::ParseCancellationException &) {
        return; // the strategy reported the error
      }
    }
  } catch (const TooDeep &deep) {
    uint32_t line = deep.at ? deep.at->getLine() : 1;
    uint32_t col = deep.at ? deep.at->getCharPositionInLine() + 1 : 1;
    job.diags.error({line, col, line, col + 1}, "nesting too deep (more than " +
                                                    std::to_string(parse::kMaxNesting) +
                                                    " levels)");
    return;
  }
  if (job.diags.has_errors())
    return;
  // The stdlib's macros, parsed beside the script: their trees live until the AST is built.
  ByteStream stdlib_input(stdlib_macros().text());
  gpubt_parse::GpubtLexer stdlib_lexer(&stdlib_input);
  stdlib_lexer.removeErrorListeners();
  antlr4::CommonTokenStream stdlib_tokens(&stdlib_lexer);
  gpubt_parse::GpubtParser stdlib_parser(&stdlib_tokens);
  stdlib_parser.removeErrorListeners();
  stdlib_parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  parse::StdlibMacros stdlib{{}, &stdlib_input};
  while (stdlib_tokens.LA(1) != antlr4::Token::EOF)
    stdlib.defs.push_back(stdlib_parser.macroDef());
  job.result = parse::build_ast(tree, tokens, text, job.params, job.diags, stdlib);
}

void *parse_thread(void *arg) {
  Job &job = *static_cast<Job *>(arg);
  try {
    parse_on_this_thread(job);
  } catch (const std::exception &e) {
    job.result.reset();
    job.diags.error({}, std::string("BUG: parser failed: ") + e.what());
  } catch (...) {
    job.result.reset();
    job.diags.error({}, "BUG: parser failed");
  }
  return nullptr;
}

} // namespace

std::unique_ptr<Program> parse_program(const SourceFile &file, Diagnostics &diags,
                                       const std::vector<std::string> &params) {
  Diagnostics local;
  if (!check_nesting(file, local)) {
    for (const auto &d : local.all())
      diags.error(d.span, d.message);
    return nullptr;
  }
  // 1000 AST levels take a few MiB of ANTLR frames at most (more under ASan); the rest of the
  // thread's stack is headroom for ANTLR's own recursion over prediction contexts.
  Job job{file, local, {params}, nullptr, kParserStack / 16};
  pthread_attr_t attr;
  pthread_t thread;
  bool threaded = pthread_attr_init(&attr) == 0 &&
                  pthread_attr_setstacksize(&attr, kParserStack) == 0 &&
                  pthread_create(&thread, &attr, parse_thread, &job) == 0;
  pthread_attr_destroy(&attr);
  if (threaded)
    pthread_join(thread, nullptr);
  else {
    job.stack_budget = 1u << 20; // no thread to be had: parse here, with the caller's stack
    parse_thread(&job);
  }
  for (const auto &d : local.all()) {
    if (d.severity == Severity::Error)
      diags.error(d.span, d.message);
    else
      diags.warning(d.span, d.message);
  }
  return local.has_errors() ? nullptr : std::move(job.result);
}

} // namespace gpubt::frontend
