// Walks import statements in order: a statement must come before every probe, macro and map
// declaration of its file; each file it names is loaded unless some import already did.
#include "frontend/parse/imports.h"

#include <filesystem>
#include <set>

#include "frontend/import_paths.h"
#include "frontend/parse/literals.h"
#include "frontend/parse/syntax_errors.h"

namespace gpubt::frontend::parse {
namespace {

using P = gpubt_parse::GpubtParser;

class Loader {
public:
  Loader(SourceFile &script, size_t stack_budget, Diagnostics &diags)
      : script_(script), stack_budget_(stack_budget), diags_(diags) {
    std::error_code ec; // a script importing itself, at any depth, adds nothing
    if (auto self = std::filesystem::canonical(script.name(), ec); !ec)
      seen_.insert(self.string());
  }

  // The import statements of one file (FILE, its SourceSpan::file), among its top-level items.
  void load_from(antlr4::ParserRuleContext *tree, const SourceFile &from, uint8_t file) {
    antlr4::ParserRuleContext *after = nullptr; // the first probe, macro or map declaration
    for (auto *child : tree->children) {
      auto *stmt = dynamic_cast<P::ImportStmtContext *>(child);
      if (!stmt) {
        if (!after && (dynamic_cast<P::ProbeContext *>(child) ||
                       dynamic_cast<P::MacroDefContext *>(child) ||
                       dynamic_cast<P::MapDeclContext *>(child)))
          after = static_cast<antlr4::ParserRuleContext *>(child);
        continue;
      }
      SourceSpan at = place(stmt, file);
      if (after) {
        diags_.error(at, "import must come before any probe, macro or map declaration");
        continue;
      }
      StringLiteral path = decode_string(text(stmt->STRING()->getSymbol(), from));
      if (!path.error.empty()) {
        diags_.error(at, path.error);
        continue;
      }
      load(path.value, from, at);
    }
  }

  LoadedImports result;

private:
  SourceFile &script_;
  size_t stack_budget_;
  Diagnostics &diags_;
  std::set<std::string> seen_;

  static std::string text(const antlr4::Token *t, const SourceFile &from) {
    return from.text().substr(t->getStartIndex(), t->getStopIndex() - t->getStartIndex() + 1);
  }
  static SourceSpan place(P::ImportStmtContext *stmt, uint8_t file) {
    SourceSpan s = SourceSpan::merge(token_span(stmt->getStart()), token_span(stmt->getStop()));
    s.file = file;
    return s;
  }

  void load(const std::string &written, const SourceFile &from, const SourceSpan &at) {
    ResolvedImport found = resolve_import(written, from.name());
    if (!found.error.empty()) {
      diags_.error(at, found.error);
      return;
    }
    for (const auto &target : found.files) {
      if (!seen_.insert(target.path).second)
        continue;
      if (target.kind == ImportKind::Header) {
        result.headers.push_back(target.path);
        continue;
      }
      std::string text, error;
      if (!read_import(target.path, text, error)) {
        diags_.error(at, error);
        continue;
      }
      uint8_t file = script_.add_import(SourceFile(target.path, std::move(text)));
      if (file == 0) {
        diags_.error(at, "too many imported files");
        return;
      }
      const SourceFile &imported = script_.file_of(file);
      auto parsed = parse_text(imported.text(), StartRule::ImportedScript, file, stack_budget_,
                               diags_);
      if (!parsed->tree)
        continue;
      auto *tree = static_cast<P::ImportedScriptContext *>(parsed->tree);
      result.scripts.push_back(
          {tree, {parsed->input.get(), parsed->tokens.get(), &imported.text(), file}});
      result.parsed.push_back(std::move(parsed));
      load_from(tree, imported, file);
    }
  }
};

} // namespace

LoadedImports load_imports(P::ProgramContext *tree, SourceFile &script, size_t stack_budget,
                           Diagnostics &diags) {
  Loader loader(script, stack_budget, diags);
  loader.load_from(tree, script, 0);
  return std::move(loader.result);
}

} // namespace gpubt::frontend::parse
