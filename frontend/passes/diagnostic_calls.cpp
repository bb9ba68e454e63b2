// The diagnostic around an errorf()/warnf() message, rendered once here where the source is.
#include "frontend/passes/diagnostic_calls.h"

#include "frontend/ast_walk.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

void render_diagnostic_calls(const Program &program, const SourceFile &file, bool no_warnings,
                             SemanticInfo &info) {
  constexpr std::string_view kHole = "\x01";
  for (const auto &probe : program.probes)
    for_each_expr(*probe, [&](const Expr &e) {
      if (e.kind != ExprKind::Call)
        return;
      const auto &call = e.as<CallExpr>();
      bool is_error = call.id == FunctionId::Errorf;
      if ((!is_error && call.id != FunctionId::Warnf) || call.args.empty() ||
          call.args[0]->kind != ExprKind::String)
        return;
      if (!is_error && no_warnings) {
        info.diagnostic_frames[&call].silent = true;
        return;
      }
      Diagnostics one;
      if (is_error)
        one.error(call.span, std::string(kHole));
      else
        one.warning(call.span, std::string(kHole));
      for (const SourceSpan &site : call.expanded_from) // bpftrace's note, at the same level
        if (is_error)
          one.error(site, "expanded from");
        else
          one.warning(site, "expanded from");
      std::string text = one.render(file);
      size_t hole = text.find(kHole);
      info.diagnostic_frames[&call] = {text.substr(0, hole), text.substr(hole + kHole.size())};
    });
}

} // namespace gpubt::frontend
