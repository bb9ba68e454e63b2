// What the semantic passes learn about a program, for checking and for codegen.
#pragma once
#include <map>
#include <string>

#include "frontend/ast.h"
#include "frontend/c_types.h"

namespace gpubt::frontend {

struct MapInfo {
  std::string name;     // "@x"
  Type key;             // TypeKind::None for a scalar map; Tuple for @m[a, b]
  Type value;           // an aggregation kind (Count, Hist, ...) or a plain value type
  SourceSpan first_use; // where key and value types were fixed
  // `let @m = KIND(N);`: "hash", "lruhash", "percpuhash" or "percpulruhash", and N (0: none)
  std::string decl_kind;
  uint64_t decl_max_entries = 0;
  bool internal = false; // made by a pass (launch_call_uprobe.h), not the script: never printed
};

struct SemanticInfo {
  std::map<std::string, MapInfo> maps;
  // $variables, per probe (bpftrace scopes them to the probe).
  std::map<const Probe *, std::map<std::string, Type>> vars;
  // The script's C definitions: record types (stubs behind pointers complete from here), enum
  // constants and integer #defines.
  CTypes c_types;
  // kaddr("sym") and uaddr("sym") calls whose symbol was found: its address. A call missing
  // here is reported by check_types.
  std::map<const CallExpr *, uint64_t> symbol_addresses;
  // percpu_kaddr("var") calls whose variable the kernel's BTF has: its BTF id.
  std::map<const CallExpr *, uint32_t> percpu_var_ids;
  // errorf()/warnf(): the diagnostic around the call's formatted text (diagnostic_calls.h);
  // silent: a warnf() under --no-warnings.
  struct DiagnosticFrame {
    std::string before, after;
    bool silent = false;
  };
  std::map<const CallExpr *, DiagnosticFrame> diagnostic_frames;
};

} // namespace gpubt::frontend
