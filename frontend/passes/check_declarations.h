// The top-level declarations of newer bpftrace: `config = { ... }` (its configuration options,
// set in the script) and `let @m = hash(N);` (a map's kind and size).
#pragma once
#include <cstdint>
#include <optional>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// The options gpubt acts on; the other known ones are accepted and change nothing here.
struct ScriptConfig {
  std::optional<bool> print_maps_on_exit;
  std::optional<uint64_t> max_map_keys; // the environment's BPFTRACE_MAP_KEYS_MAX wins
};

// An unknown option or a bad value is an error at its item, an unknown map kind one at its
// declaration, a map declared twice too; a declared map no probe uses is a warning.
ScriptConfig check_declarations(const Program &program, Diagnostics &diags);

} // namespace gpubt::frontend
