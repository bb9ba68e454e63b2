// Parse, resolve, check, lower: the stages in order, each one's output the next one's input.
#include "driver/compile.h"

#include "frontend/parse/parse.h"
#include "frontend/passes/check_types.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::driver {

std::optional<Compiled> compile(const Options &options, std::ostream &err) {
  frontend::SourceFile file(options.program_name, options.program_text);
  frontend::Diagnostics diags;
  auto report = [&] {
    diags.render(err, file);
    return diags.has_errors();
  };

  Compiled c;
  c.program = frontend::parse_program(file, diags);
  if (!c.program || report())
    return std::nullopt;

  frontend::SemanticOptions sema_opts;
  sema_opts.has_child = !options.child_command.empty();
  c.sema = frontend::resolve_types(*c.program, sema_opts);
  frontend::check_types(*c.program, c.sema, sema_opts, diags);
  if (report())
    return std::nullopt;
  if (options.emit == EmitStage::Ast)
    return c;

  codegen::bpf::BpfCodegenOptions cg_opts;
  cg_opts.has_child = sema_opts.has_child;
  auto artifacts = codegen::bpf::lower_to_bpf(*c.program, c.sema, cg_opts);
  if (!artifacts) {
    err << file.name() << ": ERROR: " << artifacts.error() << "\n";
    return std::nullopt;
  }
  c.bpf = std::move(*artifacts);
  return c;
}

} // namespace gpubt::driver
