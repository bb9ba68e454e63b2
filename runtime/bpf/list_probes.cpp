// bpftrace -l for the probe types gpubt attaches on the host: tracepoints and uprobes.
#include "runtime/bpf/list_probes.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbols.h"
#include "runtime/bpf/tracefs.h"

namespace gpubt::runtime {
namespace {

bool starts_with(const std::string &s, const std::string &p) { return s.rfind(p, 0) == 0; }

Status list_uprobes(const std::string &rest, std::ostream &out, int pid) {
  auto colon = rest.rfind(':');
  std::string target = colon == std::string::npos ? rest : rest.substr(0, colon);
  std::string func = colon == std::string::npos ? "*" : rest.substr(colon + 1);
  auto path = resolve_binary_path(target, pid);
  if (!path)
    return make_error(path.error());
  auto syms = cached_elf_functions(*path);
  if (!syms)
    return make_error(syms.error());
  for (const auto &s : **syms) // sorted by name; aliases are listed, as bpftrace does
    if (match_wildcard(func, s.name))
      out << "uprobe:" << target << ":" << s.name << "\n";
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

Status list_probes(const std::string &pattern, std::ostream &out, int pid) {
  for (const char *p : {"uprobe:", "u:", "uretprobe:", "ur:"})
    if (starts_with(pattern, p))
      return list_uprobes(pattern.substr(std::string(p).size()), out, pid);
  if (starts_with(pattern, "t:"))
    return list_tracepoints_matching("tracepoint:" + pattern.substr(2), out);
  return list_tracepoints_matching(pattern, out);
}

} // namespace gpubt::runtime
