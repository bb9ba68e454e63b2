// Each hook is the runtime/ or stdlib lookup that answers it, in the order the checker's
// messages prefer them: tracepoint formats and the GPU API catalog before DWARF.
#include "driver/semantic_hooks.h"

#include "codegen/bpf/lower_hang.h"
#include "codegen/bpf/tracepoint_format.h"
#include "driver/trace.h"
#include "frontend/clang/btf_definitions.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbol_address.h"
#include "stdlib/api_types.h"

namespace gpubt::driver {

frontend::SemanticOptions make_semantic_options(const Options &options,
                                                const ProgramTypes &program_types,
                                                const frontend::CTypes &c_types,
                                                std::ostream &err) {
  frontend::SemanticOptions so;
  so.c_types = &c_types;
  so.has_child = !options.child_command.empty();
  so.strlen = static_cast<uint32_t>(options.env.strlen);
  so.unsafe = options.bt.unsafe;
  auto style = output_style(); // a bad value is reported when the run starts
  so.head_types = style && *style == runtime::OutputStyle::BpftraceHead;
  // args.NAME: tracepoint formats, the GPU API catalog for uprobes of catalogued functions,
  // else the binary's debug info.
  so.field_type = [&](const frontend::AttachPoint &ap, std::string_view field) {
    if (ap.provider == frontend::Provider::Tracepoint)
      return codegen::bpf::tracepoint_arg_type(ap, field);
    if (ap.provider == frontend::Provider::GpuHang)
      return codegen::bpf::hang_arg_type(ap, field);
    if (auto t = stdlib::api_arg_type(ap, field))
      return t;
    return uprobe_arg_type(program_types, c_types, ap, field);
  };
  so.retval_type = stdlib::api_retval_type;
  so.field_error = [&](const frontend::AttachPoint &ap, std::string_view field) {
    if (ap.provider == frontend::Provider::Tracepoint)
      return codegen::bpf::tracepoint_arg_error(ap, field);
    if (ap.provider == frontend::Provider::GpuHang)
      return codegen::bpf::hang_arg_error(ap, field);
    std::string msg = stdlib::api_arg_error(ap, field);
    return msg.empty() ? uprobe_arg_error(program_types, c_types, ap, field) : msg;
  };
  so.argn_error = stdlib::api_argn_error;
  so.user_symbol = [](const std::string &binary,
                      const std::string &name) -> std::optional<frontend::SymbolInfo> {
    auto path = runtime::resolve_binary_path(binary);
    auto s = path ? runtime::elf_symbol_address(*path, name) : std::nullopt;
    return s ? std::optional(frontend::SymbolInfo{s->address, s->size}) : std::nullopt;
  };
  // --dry-run attaches nothing, so a symbol this kernel does not list (a data symbol without
  // CONFIG_KALLSYMS_ALL: loads.bt's avenrun) compiles as 0, with a warning; a run fails on it.
  so.kernel_symbol = [&options, &err](const std::string &name)
      -> std::optional<frontend::SymbolInfo> {
    if (auto s = runtime::kernel_symbol_address(name))
      return frontend::SymbolInfo{s->address, s->size};
    if (!options.dry_run)
      return std::nullopt;
    if (!options.bt.no_warnings)
      err << "WARNING: kaddr(\"" << name << "\"): not in /proc/kallsyms; 0 in this dry run\n";
    return frontend::SymbolInfo{};
  };
  // The kernel finds the variable's address by name in kallsyms when it loads the program: a
  // kernel without CONFIG_KALLSYMS_ALL lists no variables, and would refuse it then.
  so.percpu_var = [&options](const std::string &name) -> std::optional<uint32_t> {
    auto id = frontend::kernel_percpu_var_id(name);
    if (id && !options.dry_run && !runtime::kernel_symbol_address(name))
      return std::nullopt;
    return id;
  };
  return so;
}

} // namespace gpubt::driver
