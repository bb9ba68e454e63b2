// bpftrace -l for the probe types gpubt attaches on the host: tracepoints, uprobes, uretprobes,
// usdt, software and hardware events. A pattern is TYPE:REST; TYPE may be a wildcard
// ("*ware:*", "*:./app:*"), and then each matching type lists what REST names, quietly.
#include "runtime/bpf/list_probes.h"
#include "runtime/bpf/perf_event_names.h"
#include "runtime/bpf/tracefs.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/dwarf_types.h"
#include "runtime/process/symbols.h"
#include "runtime/process/usdt_probes.h"
#include <algorithm>
#include <memory>
#include <set>

namespace gpubt::runtime {
namespace {

using Lines = std::vector<std::string>;

struct Split {
  std::string head, rest; // before and after the first ':' ("" when none)
};
Split split_first(const std::string &s) {
  auto colon = s.find(':');
  if (colon == std::string::npos)
    return {s, ""};
  return {s.substr(0, colon), s.substr(colon + 1)};
}

// uprobe targets with -p: "" or "*" is every file the process maps.
Result<std::vector<std::string>> files_of(const std::string &target, int pid) {
  if (pid > 0 && (target.empty() || target == "*"))
    return target_files("", pid);
  return target_files(target, pid);
}

// What -lv lists and from where; a uprobe's arguments come from API_ARGS before DWARF.
struct Verbose {
  bool on = false;
  const ApiArgLines *api_args = nullptr;
};

// -lv: a function's parameters, as bpftrace lists a binary's DWARF ones.
void list_params(const Verbose &v, const DebugInfo *info, const std::string &type,
                 const std::string &target, const std::string &func, Lines &out) {
  if (v.api_args && *v.api_args)
    if (auto lines = (*v.api_args)(type, target, func); !lines.empty()) {
      for (const auto &l : lines)
        out.push_back("    " + l);
      return;
    }
  if (auto params = info ? info->params(func) : std::nullopt)
    for (const auto &p : *params)
      out.push_back("    " + p.type + " " + p.name);
}

Status list_functions(const std::string &type, const std::string &rest, int pid,
                      const Verbose &verbose, Lines &out) {
  auto colon = rest.rfind(':');
  std::string target = colon == std::string::npos ? rest : rest.substr(0, colon);
  std::string func = colon == std::string::npos ? "*" : rest.substr(colon + 1);
  auto files = files_of(target, pid);
  if (!files)
    return make_error(files.error());
  bool as_written = !target.empty() && !has_wildcard(target);
  for (const auto &file : *files) {
    auto syms = cached_elf_functions(file);
    if (!syms) {
      if (as_written)
        return make_error(syms.error());
      continue;
    }
    std::unique_ptr<DebugInfo> info = verbose.on ? DebugInfo::open(file) : nullptr;
    const std::string &named = as_written ? target : file;
    for (const auto &s : **syms) // sorted by name; aliases are listed, as bpftrace does
      if (match_wildcard(func, s.name)) {
        out.push_back(type + ":" + named + ":" + s.name);
        if (verbose.on)
          list_params(verbose, info.get(), type, named, s.name, out);
      }
  }
  return Ok{};
}

// usdt:FILE[:PROVIDER]:NAME, usdt:FILE (every probe), with -p usdt:* (the process's files).
Status list_usdt(const std::string &rest, int pid, Lines &out) {
  std::vector<std::string> parts{""};
  for (char c : rest) {
    if (c == ':')
      parts.emplace_back();
    else
      parts.back().push_back(c);
  }
  std::string target = parts[0], provider, name = "*";
  if (parts.size() == 2)
    name = parts[1];
  else if (parts.size() >= 3)
    provider = parts[1], name = parts[2];
  if (pid > 0 && target == "*")
    target.clear();
  auto sites = find_usdt_sites(target, provider, name.empty() ? "*" : name, pid);
  if (!sites)
    return make_error(sites.error());
  bool as_written = !target.empty() && !has_wildcard(target);
  std::set<std::string> lines; // a probe inlined twice is listed once; bpftrace sorts them
  for (const auto &s : *sites)
    lines.insert("usdt:" + (as_written ? target : s.path) + ":" + s.provider + ":" + s.name);
  out.insert(out.end(), lines.begin(), lines.end());
  return Ok{};
}

Status list_perf_events(const std::string &type, const std::string &rest, Lines &out) {
  auto events = type == "software" ? software_events() : hardware_events();
  std::string name = split_first(rest).head;
  for (const auto &e : events)
    if (rest.empty() || match_wildcard(name, e.name))
      out.push_back(type + ":" + e.name + ":");
  return Ok{};
}

// VERBOSE (-lv): each tracepoint's fields under it, as bpftrace 0.17 lists them.
Status list_tracepoints_matching(const std::string &rest, bool verbose, Lines &out) {
  auto tps = list_tracepoints();
  if (!tps)
    return make_error(tps.error());
  for (const auto &tp : *tps) {
    if (!rest.empty() && !match_wildcard(rest, tp.category + ":" + tp.name))
      continue;
    out.push_back("tracepoint:" + tp.category + ":" + tp.name);
    if (!verbose)
      continue;
    if (auto fields = tracepoint_field_declarations(tp.category, tp.name))
      for (const auto &f : *fields)
        out.push_back("    " + f);
  }
  return Ok{};
}

struct TypeRow {
  const char *name, *alias;
};
constexpr TypeRow kTypes[] = {{"tracepoint", "t"}, {"uprobe", "u"},   {"uretprobe", "ur"},
                              {"usdt", "U"},       {"software", "s"}, {"hardware", "h"}};

// Probe types a script may name whose probes -l has no list of.
constexpr const char *kUnlisted[] = {"BEGIN",   "END",        "interval", "profile", "kprobe",
                                     "k",       "kretprobe",  "kr",       "watchpoint", "w",
                                     "asyncwatchpoint", "aw"};

// TYPE of a "TYPE:REST" pattern that names no probe type -l lists: an error, as bpftrace's,
// with the nearest probe type where HINT finds one.
Status unknown_type(const std::string &type, const NameHint &hint) {
  for (const char *t : kUnlisted)
    if (type == t)
      return make_error("-l lists no " + type + " probes (it lists tracepoint, uprobe, "
                        "uretprobe, usdt, software, hardware and gpu probes)");
  std::vector<std::string> types{"gpu"};
  for (const auto &t : kTypes)
    types.push_back(t.name);
  for (const char *t : kUnlisted)
    types.push_back(t);
  return make_error("Invalid probe type: " + type + (hint ? hint(type, types) : ""));
}

Status list_type(const std::string &type, const std::string &rest, int pid,
                 const Verbose &verbose, Lines &out) {
  if (type == "tracepoint")
    return list_tracepoints_matching(rest, verbose.on, out);
  if (type == "uprobe" || type == "uretprobe")
    return list_functions(type, rest, pid, verbose, out);
  if (type == "usdt")
    return list_usdt(rest, pid, out);
  return list_perf_events(type, rest, out);
}

// bpftrace lexes the search as a probe: characters no attach point has are an error.
Status check_characters(const std::string &pattern) {
  for (char c : pattern)
    if (!isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_-./*?[]:+~$@!^\"%=&|#, ").find(c) == std::string_view::npos)
      return make_error(std::string("invalid character '") + c + "'");
  return Ok{};
}

} // namespace

Status list_probes(const std::string &pattern, std::ostream &out, int pid, bool verbose_on,
                   const ApiArgLines &api_args, const NameHint &name_hint) {
  if (auto st = check_characters(pattern); !st)
    return st;
  Lines lines;
  if (pattern.rfind("host:", 0) == 0) { // host:uprobe:... as a script spells it
    if (pattern.rfind("host:gpu:", 0) == 0)
      return make_error("host: cannot prefix a gpu probe");
    return list_probes(pattern.substr(5), out, pid, verbose_on, api_args, name_hint);
  }
  Verbose verbose{verbose_on, &api_args};
  if (pattern.empty()) {
    // With -p: the process's functions and USDT probes; else what the system has.
    std::vector<std::string> types = pid > 0 ? std::vector<std::string>{"uprobe", "usdt"}
                                             : std::vector<std::string>{"tracepoint", "software",
                                                                        "hardware"};
    for (const auto &type : types)
      if (auto st = list_type(type, pid > 0 ? "*:*" : "", pid, verbose, lines); !st)
        return st;
  } else {
    auto [head, rest] = split_first(pattern);
    bool any = false;
    for (const auto &t : kTypes) {
      bool named = head == t.name || head == t.alias;
      if (!named && !(has_wildcard(head) && match_wildcard(head, t.name)))
        continue;
      any = true;
      auto st = list_type(t.name, rest, pid, verbose, lines);
      if (!st && named)
        return st;
    }
    if (!any && !rest.empty() && !has_wildcard(head) && head.find('/') == std::string::npos)
      return unknown_type(head, name_hint);
    if (!any) { // no type: the whole pattern against every tracepoint line
      Lines all;
      if (auto st = list_type("tracepoint", "", pid, Verbose{}, all); !st)
        return st;
      for (auto &l : all)
        if (match_wildcard(pattern, l) || match_wildcard("tracepoint:" + pattern, l))
          lines.push_back(l);
    }
  }
  for (const auto &l : lines)
    out << l << "\n";
  return Ok{};
}

} // namespace gpubt::runtime
