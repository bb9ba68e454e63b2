// parse_program: parses the script and the files it imports on a thread with a large stack
// (ANTLR's recursive descent recurses once per nesting level), then builds one AST of them.
#include "frontend/parse/parse.h"

#include <pthread.h>

#include "GpubtLexer.h"
#include "GpubtParser.h"
#include "frontend/parse/ast_builder.h"
#include "frontend/parse/imports.h"
#include "frontend/parse/parse_text.h"
#include "frontend/stdlib_macros.h"

namespace gpubt::frontend {
namespace {

constexpr size_t kParserStack = 512u << 20; // virtual; only the depth actually used is touched

struct Job {
  SourceFile &file;
  Diagnostics &diags;
  parse::PositionalParams params;
  std::unique_ptr<Program> result;
  size_t stack_budget; // bytes of stack ANTLR's recursive descent may use
};

void parse_on_this_thread(Job &job) {
  auto script = parse::parse_text(job.file.text(), parse::StartRule::Program, 0, job.stack_budget,
                                  job.diags);
  if (!script->tree)
    return;
  auto *tree = static_cast<gpubt_parse::GpubtParser::ProgramContext *>(script->tree);
  parse::LoadedImports imports = parse::load_imports(tree, job.file, job.stack_budget, job.diags);
  if (job.diags.has_errors())
    return;
  // The stdlib's macros, parsed beside the script: their trees live until the AST is built.
  antlr4::ANTLRInputStream stdlib_input(stdlib_macros().text());
  gpubt_parse::GpubtLexer stdlib_lexer(&stdlib_input);
  stdlib_lexer.removeErrorListeners();
  antlr4::CommonTokenStream stdlib_tokens(&stdlib_lexer);
  gpubt_parse::GpubtParser stdlib_parser(&stdlib_tokens);
  stdlib_parser.removeErrorListeners();
  stdlib_parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  parse::StdlibMacros stdlib{{}, {&stdlib_input, &stdlib_tokens, &stdlib_macros().text(),
                                  kStdlibFile}};
  while (stdlib_tokens.LA(1) != antlr4::Token::EOF)
    stdlib.defs.push_back(stdlib_parser.macroDef());
  job.result = parse::build_ast(tree, *script->tokens, job.file.text(), job.params, job.diags,
                                stdlib, imports.scripts);
  if (job.result)
    job.result->imported_headers = std::move(imports.headers);
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

std::unique_ptr<Program> parse_program(SourceFile &file, Diagnostics &diags,
                                       const std::vector<std::string> &params) {
  Diagnostics local;
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
