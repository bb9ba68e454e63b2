// tracefs lookups. perf_event_open needs a tracepoint's id, which only tracefs publishes.
#include "runtime/bpf/tracefs.h"
#include "runtime/process/symbols.h"
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <tuple>

namespace gpubt::runtime {
namespace {

bool has_events(const std::string &root) {
  struct stat st;
  return stat((root + "/events").c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

Result<std::string> tracefs_root() {
  static const std::string tracing = "/sys/kernel/tracing";
  static const std::string debug = "/sys/kernel/debug/tracing";
  if (has_events(tracing))
    return tracing;
  if (has_events(debug))
    return debug;
  if (mount("nodev", tracing.c_str(), "tracefs", 0, nullptr) == 0 && has_events(tracing))
    return tracing;
  struct stat st;
  if (stat((tracing + "/events").c_str(), &st) != 0 && errno == EACCES) // mounted, mode 0700
    return make_error("cannot read tracefs at " + tracing +
                      ": Permission denied (run gpubt as root)");
  return make_error("tracefs is not mounted at " + tracing +
                    "; mount it with: mount -t tracefs nodev " + tracing);
}

Result<int> tracepoint_id(const std::string &category, const std::string &name) {
  auto root = tracefs_root();
  if (!root)
    return make_error(root.error());
  std::ifstream f(*root + "/events/" + category + "/" + name + "/id");
  int id = -1;
  if (!(f >> id))
    return make_error("tracepoint not found: " + category + ":" + name);
  return id;
}

Result<std::vector<std::string>> tracepoint_field_declarations(const std::string &category,
                                                               const std::string &name) {
  auto root = tracefs_root();
  if (!root)
    return make_error(root.error());
  std::string path = *root + "/events/" + category + "/" + name + "/format";
  std::ifstream f(path);
  if (!f)
    return make_error("cannot read " + path);
  std::vector<std::string> fields;
  for (std::string line; std::getline(f, line);) {
    auto at = line.find("field:");
    auto end = line.find(';', at);
    if (at == std::string::npos || end == std::string::npos)
      continue;
    std::string decl = line.substr(at + 6, end - at - 6);
    auto name_at = decl.find_last_of(" *");
    if (decl.compare(name_at + 1, 7, "common_") != 0)
      fields.push_back(std::move(decl));
  }
  return fields;
}

Result<std::vector<Tracepoint>> list_tracepoints() {
  auto root = tracefs_root();
  if (!root)
    return make_error(root.error());
  std::ifstream f(*root + "/available_events");
  if (!f)
    return make_error("cannot read " + *root + "/available_events");
  std::vector<Tracepoint> out;
  std::string line;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    out.push_back({line.substr(0, colon), line.substr(colon + 1)});
  }
  std::sort(out.begin(), out.end(), [](const Tracepoint &a, const Tracepoint &b) {
    return std::tie(a.category, a.name) < std::tie(b.category, b.name);
  });
  return out;
}

Result<std::vector<Tracepoint>> match_tracepoints(const std::string &category_pattern,
                                                  const std::string &name_pattern) {
  if (!has_wildcard(category_pattern) && !has_wildcard(name_pattern)) {
    auto id = tracepoint_id(category_pattern, name_pattern);
    if (!id)
      return make_error(id.error());
    return std::vector<Tracepoint>{{category_pattern, name_pattern}};
  }
  auto all = list_tracepoints();
  if (!all)
    return all;
  std::vector<Tracepoint> out;
  for (auto &tp : *all)
    if (match_wildcard(category_pattern, tp.category) && match_wildcard(name_pattern, tp.name))
      out.push_back(tp);
  return out;
}

} // namespace gpubt::runtime
