// config = { ... } and let @m = KIND(N) (check_declarations.h).
#include "frontend/passes/check_declarations.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "frontend/ast_walk.h"

namespace gpubt::frontend {
namespace {

// bpftrace's configuration options (src/config.cpp at its head) and their older names.
const char *const kKnownOptions[] = {
    "cache_user_symbols", "cpp_demangle",   "lazy_symbolication", "license",
    "log_size",           "max_bpf_progs",  "max_cat_bytes",      "max_map_keys",
    "max_probes",         "max_strlen",     "on_stack_limit",     "perf_rb_pages",
    "stack_mode",         "str_trunc_trailer", "missing_probes",  "print_maps_on_exit",
    "use_blazesym",       "show_debug_info"};
const std::pair<const char *, const char *> kOldNames[] = {{"strlen", "max_strlen"},
                                                           {"no_cpp_demangle", "cpp_demangle"},
                                                           {"cat_bytes_max", "max_cat_bytes"},
                                                           {"map_keys_max", "max_map_keys"}};

// `BPFTRACE_MAX_MAP_KEYS` and `max_map_keys` name the same option.
std::string option_name(std::string name) {
  if (name.rfind("BPFTRACE_", 0) == 0) {
    name = name.substr(9);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  }
  for (auto [old, now] : kOldNames)
    if (name == old)
      return now;
  return name;
}

std::optional<uint64_t> number(const std::string &v) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), ::isdigit) || v.size() > 19)
    return std::nullopt;
  return std::stoull(v);
}

std::optional<bool> flag(const std::string &v) {
  if (v == "1" || v == "true")
    return true;
  if (v == "0" || v == "false")
    return false;
  return std::nullopt;
}

void read_config(const Program &program, ScriptConfig &out, Diagnostics &diags) {
  for (const auto &item : program.config) {
    std::string name = option_name(item.name);
    if (std::none_of(std::begin(kKnownOptions), std::end(kKnownOptions),
                     [&](const char *k) { return name == k; })) {
      diags.error(item.span, item.name + ": not a known configuration option");
      continue;
    }
    auto bad = [&](const char *want) {
      diags.error(item.span, item.name + ": expects " + want + ", not '" + item.value + "'");
    };
    if (name == "print_maps_on_exit") {
      if (!(out.print_maps_on_exit = flag(item.value)))
        bad("true or false");
    } else if (name == "max_map_keys") {
      if (!(out.max_map_keys = number(item.value)))
        bad("a number");
    }
  }
}

const char *const kMapKinds[] = {"hash", "lruhash", "percpuhash", "percpulruhash"};

void check_map_decls(const Program &program, Diagnostics &diags) {
  std::set<std::string> used, declared;
  for (const auto &p : program.probes)
    for_each_expr(*p, [&](const Expr &e) {
      if (e.kind == ExprKind::Map)
        used.insert(e.as<MapExpr>().name);
      else if (e.kind == ExprKind::Call) // delete(@m), clear(@m), print(@m): the map's name
        for (const auto &a : e.as<CallExpr>().args)
          if (a->kind == ExprKind::Map)
            used.insert(a->as<MapExpr>().name);
    });
  for (const auto &d : program.map_decls) {
    if (std::none_of(std::begin(kMapKinds), std::end(kMapKinds),
                     [&](const char *k) { return d.kind == k; }))
      diags.error(d.span, "Invalid bpf map type: " + d.kind +
                              " (hash, lruhash, percpuhash or percpulruhash)");
    else if (d.max_entries == 0)
      diags.error(d.span, "Map " + d.name + " must hold at least one element");
    else if (!declared.insert(d.name).second)
      diags.error(d.span, "Map " + d.name + " is already declared");
    else if (!used.count(d.name))
      diags.warning(d.span, "Unused map: " + d.name);
  }
}

} // namespace

ScriptConfig check_declarations(const Program &program, Diagnostics &diags) {
  ScriptConfig out;
  read_config(program, out, diags);
  check_map_decls(program, diags);
  return out;
}

} // namespace gpubt::frontend
