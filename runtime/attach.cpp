// One function per attach kind, picked from a table.
#include "runtime/attach.h"
#include "runtime/perf_events.h"
#include "runtime/symbols.h"
#include "runtime/tracefs.h"
#include "runtime/triggers.h"
#include <unistd.h>

namespace gpubt::runtime {
namespace {

using Events = std::vector<UniqueFd>;

Result<Events> attach_targets(const std::vector<UprobeTarget> &targets, bool ret, int prog_fd,
                              int pid, const std::string &probe_name) {
  Events out;
  out.reserve(targets.size());
  for (const auto &t : targets) {
    auto ev = open_uprobe_event(t.path, t.offset, ret, pid);
    if (!ev)
      return make_error("failed to attach " + probe_name + " (" + t.path + ":" + t.func +
                        "): " + ev.error());
    if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
      return make_error("failed to attach " + probe_name + ": " + st.error());
    out.push_back(std::move(*ev));
  }
  return out;
}

Result<Events> attach_uprobe(const abi::ProbeSpec &p, int prog_fd, int pid) {
  auto targets = resolve_uprobe_targets(p.target, p.func, pid);
  if (!targets)
    return make_error(targets.error());
  return attach_targets(*targets, p.kind == abi::AttachKind::Uretprobe, prog_fd, pid, p.name);
}

Result<Events> attach_trigger(const abi::ProbeSpec &p, int prog_fd, int) {
  auto t = trigger_target(p.kind);
  if (!t)
    return make_error(t.error());
  return attach_targets({*t}, false, prog_fd, getpid(), p.name);
}

Result<Events> attach_tracepoint(const abi::ProbeSpec &p, int prog_fd, int) {
  auto tps = match_tracepoints(p.target, p.func);
  if (!tps)
    return make_error(tps.error());
  Events out;
  for (const auto &tp : *tps) {
    auto id = tracepoint_id(tp.category, tp.name);
    if (!id)
      return make_error(id.error());
    auto ev = open_tracepoint_event(*id);
    if (!ev)
      return make_error("failed to attach " + p.name + ": " + ev.error());
    if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
      return make_error("failed to attach " + p.name + ": " + st.error());
    out.push_back(std::move(*ev));
  }
  return out;
}

Result<Events> attach_interval(const abi::ProbeSpec &p, int prog_fd, int) {
  auto ev = open_interval_event(p.interval_ns);
  if (!ev)
    return make_error("failed to attach " + p.name + ": " + ev.error());
  if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
    return make_error("failed to attach " + p.name + ": " + st.error());
  Events out;
  out.push_back(std::move(*ev));
  return out;
}

using AttachFn = Result<Events> (*)(const abi::ProbeSpec &, int, int);
struct KindAttach {
  abi::AttachKind kind;
  AttachFn fn;
};
constexpr KindAttach attachers[] = {
    {abi::AttachKind::Begin, attach_trigger},      {abi::AttachKind::End, attach_trigger},
    {abi::AttachKind::Interval, attach_interval},  {abi::AttachKind::Uprobe, attach_uprobe},
    {abi::AttachKind::Uretprobe, attach_uprobe},   {abi::AttachKind::Tracepoint, attach_tracepoint},
};

} // namespace

Result<std::vector<UniqueFd>> attach_probe(const abi::ProbeSpec &probe, int prog_fd, int pid) {
  for (const auto &a : attachers)
    if (a.kind == probe.kind)
      return a.fn(probe, prog_fd, pid);
  return make_error("BUG: unknown attach kind for " + probe.name);
}

} // namespace gpubt::runtime
