// parse_program: lexes bytes (not UTF-8, so columns are bytes as in bpftrace), parses on a
// thread with a large stack (ANTLR's recursive descent recurses once per nesting level), stops
// at the first syntax error, then builds the AST.
#include "frontend/parse/parse.h"

#include <pthread.h>

#include "GpubtLexer.h"
#include "GpubtParser.h"
#include "frontend/parse/ast_builder.h"
#include "frontend/parse/syntax_errors.h"

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
};

void parse_on_this_thread(Job &job) {
  const std::string &text = job.file.text();
  ByteStream input(text);
  gpubt_parse::GpubtLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  gpubt_parse::GpubtParser parser(&tokens);
  parser.removeErrorListeners();
  // Two stages, as ANTLR advises: SLL prediction is exact for almost every input and far
  // cheaper; only if it fails is the script parsed again with full LL, reporting the error.
  auto *interp = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  interp->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  gpubt_parse::GpubtParser::ProgramContext *tree = nullptr;
  try {
    tree = parser.program();
  } catch (const antlr4::ParseCancellationException &) {
    tokens.seek(0);
    parser.reset();
    interp->setPredictionMode(antlr4::atn::PredictionMode::LL);
    parser.setErrorHandler(std::make_shared<parse::FirstErrorStrategy>(text, tokens, job.diags));
    try {
      tree = parser.program();
    } catch (const antlr4::ParseCancellationException &) {
      return; // the strategy reported the error
    }
  }
  if (job.diags.has_errors())
    return;
  job.result = parse::build_ast(tree, tokens, text, job.params, job.diags);
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
  Job job{file, local, {params}, nullptr};
  pthread_attr_t attr;
  pthread_t thread;
  bool threaded = pthread_attr_init(&attr) == 0 &&
                  pthread_attr_setstacksize(&attr, kParserStack) == 0 &&
                  pthread_create(&thread, &attr, parse_thread, &job) == 0;
  pthread_attr_destroy(&attr);
  if (threaded)
    pthread_join(thread, nullptr);
  else
    parse_thread(&job); // no thread to be had: parse here, with the caller's stack
  for (const auto &d : local.all()) {
    if (d.severity == Severity::Error)
      diags.error(d.span, d.message);
    else
      diags.warning(d.span, d.message);
  }
  return local.has_errors() ? nullptr : std::move(job.result);
}

} // namespace gpubt::frontend
