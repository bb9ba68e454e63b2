// bpftrace -l for the probe types gpubt attaches on the host: tracepoints and uprobes.
#include "runtime/bpf/list_probes.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/dwarf_types.h"
#include "runtime/process/symbols.h"
#include "runtime/bpf/tracefs.h"

namespace gpubt::runtime {
namespace {

bool starts_with(const std::string &s, const std::string &p) { return s.rfind(p, 0) == 0; }

// -lv: a function's parameters from the binary's DWARF, as bpftrace lists them.
void list_params(const DebugInfo *info, const std::string &func, std::ostream &out) {
  if (auto params = info ? info->params(func) : std::nullopt)
    for (const auto &p : *params)
      out << "    " << p.type << " " << p.name << "\n";
}

Status list_uprobes(const std::string &rest, std::ostream &out, int pid, bool verbose) {
  auto colon = rest.rfind(':');
  std::string target = colon == std::string::npos ? rest : rest.substr(0, colon);
  std::string func = colon == std::string::npos ? "*" : rest.substr(colon + 1);
  auto path = resolve_binary_path(target, pid);
  if (!path)
    return make_error(path.error());
  auto syms = cached_elf_functions(*path);
  if (!syms)
    return make_error(syms.error());
  std::unique_ptr<DebugInfo> info = verbose ? DebugInfo::open(*path) : nullptr;
  for (const auto &s : **syms) // sorted by name; aliases are listed, as bpftrace does
    if (match_wildcard(func, s.name)) {
      out << "uprobe:" << target << ":" << s.name << "\n";
      list_params(info.get(), s.name, out);
    }
  return Ok{};
}

Status list_tracepoints_matching(const std::string &pattern, std::ostream &out) {
  auto tps = list_tracepoints();
  if (!tps)
    return make_error(tps.error());
  for (const auto &tp : *tps) {
    std::string line = "tracepoint:" + tp.category + ":" + tp.name;
    if (pattern.empty() || match_wildcard(pattern, line) ||
        match_wildcard("tracepoint:" + pattern, line))
      out << line << "\n";
  }
  return Ok{};
}

} // namespace

Status list_probes(const std::string &pattern, std::ostream &out, int pid, bool verbose) {
  for (const char *p : {"uprobe:", "u:", "uretprobe:", "ur:"})
    if (starts_with(pattern, p))
      return list_uprobes(pattern.substr(std::string(p).size()), out, pid, verbose);
  if (starts_with(pattern, "t:"))
    return list_tracepoints_matching("tracepoint:" + pattern.substr(2), out);
  return list_tracepoints_matching(pattern, out);
}

} // namespace gpubt::runtime
