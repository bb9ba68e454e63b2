// Which binaries' debug info and which kernel types a program needs, and uprobe arguments typed
// through the parameter records written from DWARF.
#include "driver/program_types.h"

#include <memory>
#include <regex>
#include <set>

#include "codegen/bpf/tracepoint_format.h"
#include "frontend/ast_walk.h"
#include "frontend/clang/btf_definitions.h"
#include "frontend/clang/script_records.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/dwarf_types.h"
#include "stdlib/api_types.h"
#include "stdlib/builtins.h"
#include "stdlib/enums.h"

namespace gpubt::driver {

using namespace frontend;

namespace {

bool is_args_field(const Expr &e) {
  return e.kind == ExprKind::Field && e.as<FieldExpr>().base->kind == ExprKind::Builtin &&
         e.as<FieldExpr>().base->as<BuiltinExpr>().name == "args";
}

bool has_wildcard(const std::string &s) { return s.find_first_of("*?[") != std::string::npos; }

// The fields of `args` PROBE reads.
std::set<std::string> args_fields(const Probe &probe) {
  std::set<std::string> out;
  for_each_expr(probe, [&](const Expr &e) {
    if (is_args_field(e))
      out.insert(e.as<FieldExpr>().field);
  });
  return out;
}

// An identifier that is neither a builtin, a GPU API constant, nor named in the script's own
// definitions (which define it, or would clash with the kernel's).
bool is_unknown_identifier(const Program &program, const std::string &name) {
  if (stdlib::find_builtin(name).info || stdlib::find_enum_constant(name))
    return false;
  std::regex word("\\b" + name + "\\b");
  for (const auto &d : program.c_definitions)
    if (std::regex_search(d.text, word))
      return false;
  return true;
}

// Kernel records the program reaches without naming them: what tracepoint fields point at,
// and curtask's task_struct.
void add_kernel_types(const Program &program, std::set<std::string> &out) {
  for (const auto &probe : program.probes) {
    for_each_expr(*probe, [&](const Expr &e) {
      if (e.kind != ExprKind::Builtin)
        return;
      const std::string &name = e.as<BuiltinExpr>().name;
      if (name == "curtask")
        out.insert("struct task_struct");
      else if (is_unknown_identifier(program, name))
        out.insert(kEnumerator + name); // a kernel enum's constant: sizeof(BTF_VAR_STATIC)
    });
    std::set<std::string> fields;
    for (const auto &ap : probe->attach_points)
      if (ap.provider == Provider::Tracepoint) {
        if (fields.empty())
          fields = args_fields(*probe);
        for (const auto &f : fields)
          if (auto tf = codegen::bpf::read_tracepoint_field(ap.target, ap.func, f);
              tf && !tf->record.empty())
            out.insert(tf->record);
      }
  }
}

// A uprobe point whose `args` come from debug info (not from the GPU API catalog).
bool wants_debug_args(const Probe &probe, const AttachPoint &ap) {
  return ap.provider == Provider::Uprobe && !has_wildcard(ap.func) &&
         !stdlib::api_function_for(ap) && !args_fields(probe).empty();
}

} // namespace

// The debug info's C for PROGRAM: the types it names that neither the script nor its headers
// define (OWN), and each uprobe's parameter record (named in TYPES).
static std::string write_debug_info(const Program &program, int pid,
                                    const std::set<std::string> &own,
                                    std::set<std::string> &defined, ProgramTypes &types) {
  std::set<std::string> wanted;
  for (const auto &n : used_records(program))
    if (!own.count(n))
      wanted.insert(n);
  // The binaries the uprobes trace, each read once, in the order the script names them.
  std::vector<std::string> paths;
  std::map<std::string, std::vector<std::pair<const Probe *, const AttachPoint *>>> points;
  for (const auto &probe : program.probes)
    for (const auto &ap : probe->attach_points) {
      if (ap.provider != Provider::Uprobe && ap.provider != Provider::Uretprobe)
        continue;
      if (wanted.empty() && !wants_debug_args(*probe, ap))
        continue;
      auto path = runtime::resolve_binary_path(ap.target, pid);
      if (!path)
        continue;
      if (!points.count(*path))
        paths.push_back(*path);
      points[*path].push_back({probe.get(), &ap});
    }
  std::string text;
  std::set<std::string> skip = own;
  int next_record = 0;
  for (const auto &path : paths) {
    auto info = runtime::DebugInfo::open(path);
    if (!info)
      continue;
    runtime::DwarfCWriter writer(*info, skip);
    for (const auto &n : wanted)
      writer.add_type(n);
    for (const auto &[probe, ap] : points[path]) {
      if (!wants_debug_args(*probe, *ap) || types.uprobe_args.count(ap->name()))
        continue;
      std::string record = "__gpubt_args_" + std::to_string(next_record++);
      if (writer.add_params_record(ap->func, record))
        types.uprobe_args[ap->name()] = "struct " + record;
    }
    text += writer.text();
    for (const auto &n : writer.defined()) {
      defined.insert(n);
      skip.insert(n); // the first binary to define a name defines it for all
      wanted.erase(n);
    }
  }
  return text;
}

void gather_program_types(const Program &program, int pid, CDefinitionOptions &opts,
                          ProgramTypes &types) {
  add_kernel_types(program, opts.kernel_types);
  opts.debug_info = [&program, pid, &types](const std::set<std::string> &own,
                                            std::set<std::string> &defined) {
    return write_debug_info(program, pid, own, defined, types);
  };
}

// The parameter record of AP's function, and FIELD's index in it; -1 when none.
static int param_index(const ProgramTypes &types, const CTypes &c_types, const AttachPoint &ap,
                       std::string_view field, const Type **record) {
  auto it = types.uprobe_args.find(ap.name());
  *record = it == types.uprobe_args.end() ? nullptr : c_types.find(it->second);
  return *record ? field_index(**record, field) : -1;
}

std::optional<Type> uprobe_arg_type(const ProgramTypes &types, const CTypes &c_types,
                                    const AttachPoint &ap, std::string_view field) {
  const Type *record = nullptr;
  int i = param_index(types, c_types, ap, field, &record);
  if (i < 0)
    return std::nullopt;
  return record->elems[i];
}

std::string uprobe_arg_error(const ProgramTypes &types, const CTypes &c_types,
                             const AttachPoint &ap, std::string_view field) {
  const Type *record = nullptr;
  if (param_index(types, c_types, ap, field, &record) >= 0 || !record)
    return "";
  std::string names;
  for (const auto &n : record->names)
    names += (names.empty() ? "" : ", ") + n;
  return ap.func + " has no argument '" + std::string(field) + "'; its arguments are: " +
         (names.empty() ? "(none)" : names);
}

std::optional<uint32_t> uprobe_arg_index(const ProgramTypes &types, const CTypes &c_types,
                                         const AttachPoint &ap, std::string_view field) {
  const Type *record = nullptr;
  int i = param_index(types, c_types, ap, field, &record);
  // SysV: the first six word-sized arguments are in registers, one each.
  if (i < 0 || i >= 6)
    return std::nullopt;
  for (int k = 0; k <= i; ++k)
    if (record->elems[k].size > 8 || record->elems[k].is_aggregate_value())
      return std::nullopt;
  return uint32_t(i);
}

} // namespace gpubt::driver
