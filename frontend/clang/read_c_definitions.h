// Reads a script's C definitions (struct/union/enum types, typedefs, `#include`, `#define`) with
// libclang, as bpftrace does: clang's own preprocessor and record layout, so that offsets,
// padding, unions, bitfields and headers come out exactly as the C compiler sees them.
#pragma once
#include <functional>
#include <set>
#include <string>

#include "frontend/ast.h"
#include "frontend/c_types.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// Clang's errors are reported at their place in the script (file:line:col and a caret).
// include_dirs: -I directories; includes: files `#include`d before the definitions (--include).
struct CDefinitionOptions {
  std::vector<std::string> include_dirs;
  std::vector<std::string> includes;
  // Kernel types wanted from BTF besides those the script names: the records tracepoint fields
  // point at, curtask's task_struct. Those the script defines itself are its own.
  std::set<std::string> kernel_types;
  // C written from the traced binaries' debug info (DWARF), given the names the script and its
  // headers define (OWN: theirs, left out); adds what it defines to DEFINED (not asked of BTF).
  std::function<std::string(const std::set<std::string> &own, std::set<std::string> &defined)>
      debug_info;
};

CTypes read_c_definitions(const Program &program, const SourceFile &file, Diagnostics &diags,
                          const CDefinitionOptions &options = {});

} // namespace gpubt::frontend
