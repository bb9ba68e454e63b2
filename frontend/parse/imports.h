// `import "PATH";`: the files a script imports, read and parsed depth first, each path once,
// with their errors at their own place (SourceSpan::file, numbered by SourceFile::add_import).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "frontend/parse/ast_builder.h"
#include "frontend/parse/parse_text.h"
#include "frontend/source.h"

namespace gpubt::frontend::parse {

struct LoadedImports {
  std::vector<std::unique_ptr<ParsedText>> parsed; // what `scripts` point into
  std::vector<ImportedScript> scripts;             // imported .bt files, in import order
  std::vector<std::string> headers;                // imported .h files, in import order
};

// SCRIPT's own imports (TREE parsed from it); the files they bring in are added to SCRIPT.
LoadedImports load_imports(gpubt_parse::GpubtParser::ProgramContext *tree, SourceFile &script,
                           size_t stack_budget, Diagnostics &diags);

} // namespace gpubt::frontend::parse
