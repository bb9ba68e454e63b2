// Test support: a script through the frontend as the driver runs it (parse, resolve_types,
// check_types, optionally check_map_sharing, check_launch_state, then launch_call on the GPU;
// no placement: every gpu probe stays on the GPU, as under GPUBT_LAUNCH_PROBES=device), for the
// back ends' tests to lower.
#pragma once
#include <memory>
#include <string>

#include "frontend/diagnostics.h"
#include "frontend/parse/parse.h"
#include "frontend/passes/check_types.h"
#include "frontend/passes/launch_call_uprobe.h"
#include "frontend/passes/launch_state.h"
#include "frontend/passes/map_sharing.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::testing {

struct CheckedScript {
  std::unique_ptr<frontend::Program> prog; // null when parsing failed
  frontend::SemanticInfo sema;
  std::string error; // the rendered diagnostics; empty when the script is good
};

inline CheckedScript check_script(const std::string &script, const frontend::SemanticOptions &so,
                                  bool check_sharing = false) {
  CheckedScript out;
  frontend::SourceFile file("stdin", script);
  frontend::Diagnostics diags;
  out.prog = frontend::parse_program(file, diags);
  if (!out.prog || diags.has_errors()) {
    out.error = diags.render(file);
    return out;
  }
  out.sema = frontend::resolve_types(*out.prog, so);
  frontend::check_types(*out.prog, out.sema, so, diags);
  if (!diags.has_errors() && check_sharing)
    frontend::check_map_sharing(*out.prog, out.sema, diags);
  if (!diags.has_errors())
    frontend::check_launch_state(*out.prog, diags);
  if (diags.has_errors())
    out.error = diags.render(file);
  else
    frontend::lower_launch_call_on_device(*out.prog, out.sema);
  return out;
}

} // namespace gpubt::testing
