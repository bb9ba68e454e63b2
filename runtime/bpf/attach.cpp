// One function per attach kind, picked from a table.
#include "runtime/bpf/attach.h"
#include "runtime/bpf/perf_event_names.h"
#include "runtime/bpf/perf_events.h"
#include "runtime/process/symbols.h"
#include "runtime/bpf/tracefs.h"
#include "runtime/bpf/uprobe_multi.h"
#include <unistd.h>

namespace gpubt::runtime {
namespace {

using Events = Attached;

std::string errno_text(const std::string &msg) {
  // ENOTSUPP (524) has no strerror text; the kernel uses it for instructions uprobes cannot
  // single-step.
  auto at = msg.find("Unknown error 524");
  return at == std::string::npos ? msg
                                 : msg.substr(0, at) + "instruction cannot be probed (ENOTSUPP)";
}

// Tries one link for targets [lo, hi); on failure splits the range to find the functions the
// kernel refuses, which are skipped when the pattern was a wildcard.
Status attach_multi_range(const std::vector<UprobeTarget> &t, size_t lo, size_t hi, bool ret,
                          int prog_fd, int pid, bool wildcard, const std::string &probe_name,
                          FunctionNames &names, Events &out) {
  std::vector<uint64_t> offsets, cookies;
  for (size_t i = lo; i < hi; ++i) {
    offsets.push_back(t[i].offset);
    uint64_t probe_index = names.probe_names->size();
    names.probe_names->push_back(probe_name.substr(0, probe_name.rfind(':') + 1) + t[i].func);
    cookies.push_back(abi::kFuncCookieTag | probe_index << 32 | names.funcs.size());
    names.funcs.push_back(t[i].func);
  }
  auto link = attach_uprobe_multi(prog_fd, t[lo].path, offsets, ret, pid, cookies);
  if (link) {
    out.fds.push_back(std::move(*link));
    out.count += hi - lo;
    return Ok{};
  }
  if (hi - lo == 1) {
    std::string why = t[lo].func + ": " + errno_text(link.error());
    if (!wildcard)
      return make_error("failed to attach " + probe_name + " (" + t[lo].path + ":" + why + ")");
    out.skipped.push_back(why);
    return Ok{};
  }
  size_t mid = lo + (hi - lo) / 2;
  if (auto st = attach_multi_range(t, lo, mid, ret, prog_fd, pid, wildcard, probe_name, names, out);
      !st)
    return st;
  return attach_multi_range(t, mid, hi, ret, prog_fd, pid, wildcard, probe_name, names, out);
}

Result<Events> attach_targets(const std::vector<UprobeTarget> &targets, bool ret, int prog_fd,
                              int pid, const std::string &probe_name, Progress &progress) {
  Events out;
  progress.expect(targets.size());
  for (const auto &t : targets) {
    auto ev = open_uprobe_event(t.path, t.offset, ret, pid);
    if (!ev)
      return make_error("failed to attach " + probe_name + " (" + t.path + ":" + t.func +
                        "): " + errno_text(ev.error()));
    if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
      return make_error("failed to attach " + probe_name + ": " + st.error());
    out.fds.push_back(std::move(*ev));
    out.count++;
    progress.done(1);
  }
  return out;
}

Result<Events> attach_uprobe(const abi::ProbeSpec &p, int prog_fd, int pid, FunctionNames &names,
                             Progress &progress) {
  auto targets = resolve_uprobe_targets(p.target, p.func, pid);
  if (!targets)
    return make_error(targets.error());
  bool ret = p.kind == abi::AttachKind::Uretprobe;
  if (!uprobe_multi_supported())
    return attach_targets(*targets, ret, prog_fd, pid, p.name, progress);
  Events out;
  if (targets->empty())
    return out;
  if (auto st = attach_multi_range(*targets, 0, targets->size(), ret, prog_fd, pid,
                                   has_wildcard(p.func), p.name, names, out);
      !st)
    return make_error(st.error());
  return out;
}

// A probe that is one perf event EV.
Result<Events> attach_one_event(const abi::ProbeSpec &p, int prog_fd, Result<UniqueFd> ev) {
  if (!ev)
    return make_error("failed to attach " + p.name + ": " + errno_text(ev.error()));
  if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
    return make_error("failed to attach " + p.name + ": " + st.error());
  Events out;
  out.fds.push_back(std::move(*ev));
  out.count = 1;
  return out;
}

// One USDT site: a uprobe at its file offset, with its semaphore counted by the kernel (for
// every process that maps the file, or only PID's, as bpftrace's --usdt-file-activation).
Result<Events> attach_usdt(const abi::ProbeSpec &p, int prog_fd, int pid, FunctionNames &,
                           Progress &) {
  return attach_one_event(p, prog_fd, open_uprobe_event(p.target, p.offset, false, pid, p.semaphore));
}

// BEGIN/END (and gpu:hang, launch-level gpu:kretprobes) attach to nothing: the session runs them when due (triggers.h). They
// count as probes, as in bpftrace's "Attaching N probes...".
Result<Events> attach_trigger(const abi::ProbeSpec &, int, int, FunctionNames &, Progress &) {
  Events out;
  out.count = 1;
  return out;
}

// A wildcard's tracepoints each get their expanded name, as a matched uprobe does: the cookie
// names it for `probe` (lower_builtins.cpp).
Result<Events> attach_tracepoint(const abi::ProbeSpec &p, int prog_fd, int, FunctionNames &names,
                                 Progress &progress) {
  auto tps = match_tracepoints(p.target, p.func);
  if (!tps)
    return make_error(tps.error());
  bool wildcard = has_wildcard(p.target) || has_wildcard(p.func);
  Events out;
  progress.expect(tps->size());
  for (const auto &tp : *tps) {
    auto id = tracepoint_id(tp.category, tp.name);
    if (!id)
      return make_error(id.error());
    auto ev = open_tracepoint_event(*id);
    if (!ev)
      return make_error("failed to attach " + p.name + ": " + ev.error());
    // A kernel without perf-event links (before 5.15) attaches the old way: `probe` is then
    // the pattern, as before.
    Result<UniqueFd> link = make_error("no wildcard");
    if (wildcard) {
      uint64_t probe_index = names.probe_names->size();
      names.probe_names->push_back("tracepoint:" + tp.category + ":" + tp.name);
      link = attach_bpf_to_event(ev->get(), prog_fd, abi::kFuncCookieTag | probe_index << 32);
    }
    if (link)
      out.fds.push_back(std::move(*link));
    else if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
      return make_error("failed to attach " + p.name + ": " + st.error());
    out.fds.push_back(std::move(*ev));
    out.count++;
    progress.done(1);
  }
  return out;
}

// Return probes on these spin locks can deadlock the kernel; bpftrace refuses them by name.
bool banned_kretprobe(const std::string &func) {
  static const char *const banned[] = {"_raw_spin_lock", "_raw_spin_lock_irqsave",
                                       "_raw_spin_unlock_irqrestore", "queued_spin_lock_slowpath"};
  for (const char *b : banned)
    if (func == b)
      return true;
  return false;
}

// Kernel functions through the kprobe PMU. Kernels without kprobes (or a function that is not
// traceable) fail here, after the program has loaded, with bpftrace's words.
Result<Events> attach_kprobe(const abi::ProbeSpec &p, int prog_fd, int, FunctionNames &,
                             Progress &) {
  bool ret = p.kind == abi::AttachKind::Kretprobe;
  if (ret && banned_kretprobe(p.func))
    return make_error("error: " + p.name + " can't be used as it might lock up your system.");
  auto ev = open_kprobe_event(p.func, ret);
  if (!ev)
    return make_error("Error attaching probe: '" + p.name + "' (" + ev.error() + ")");
  if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
    return make_error("Error attaching probe: '" + p.name + "' (" + st.error() + ")");
  Events out;
  out.fds.push_back(std::move(*ev));
  out.count = 1;
  return out;
}

// One event per online CPU, counted as one probe (profile, software, hardware).
Result<Events> attach_every_cpu(const abi::ProbeSpec &p, int prog_fd,
                                Result<UniqueFd> (*open)(const abi::ProbeSpec &, int cpu)) {
  Events out;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    auto ev = open(p, cpu);
    if (!ev)
      return make_error("failed to attach " + p.name + ": " + ev.error());
    if (auto st = attach_bpf_to_event(ev->get(), prog_fd); !st)
      return make_error("failed to attach " + p.name + ": " + st.error());
    out.fds.push_back(std::move(*ev));
  }
  out.count = 1;
  return out;
}

// profile: the CPU clock of every online CPU, as bpftrace counts it.
Result<Events> attach_profile(const abi::ProbeSpec &p, int prog_fd, int, FunctionNames &,
                              Progress &) {
  return attach_every_cpu(p, prog_fd, [](const abi::ProbeSpec &p, int cpu) {
    return open_profile_event(p.interval_ns, cpu);
  });
}

// software:EVENT:COUNT / hardware:EVENT:COUNT, by perf's event names.
Result<Events> attach_perf_event(const abi::ProbeSpec &p, int prog_fd, int, FunctionNames &,
                                 Progress &) {
  std::string kind = p.kind == abi::AttachKind::Software ? "software" : "hardware";
  if (!find_perf_event(kind, p.target))
    return make_error("Invalid " + kind + " event name: " + p.target);
  return attach_every_cpu(p, prog_fd, [](const abi::ProbeSpec &p, int cpu) {
    std::string kind = p.kind == abi::AttachKind::Software ? "software" : "hardware";
    const PerfEventName *e = find_perf_event(kind, p.target);
    return open_cpu_event(e->type, e->config, p.interval_ns ? p.interval_ns : e->default_period,
                          cpu, kind + ":" + p.target);
  });
}

// watchpoint:ADDRESS: one breakpoint, in the traced process or on every CPU. The function form
// waits for its address (Session::watch_address) and counts as one probe now, as bpftrace's.
Result<Events> attach_watchpoint(const abi::ProbeSpec &p, int prog_fd, int pid, FunctionNames &,
                                 Progress &) {
  if (p.watch_later) {
    Events out;
    out.count = 1;
    return out;
  }
  if (pid > 0)
    return attach_one_event(
        p, prog_fd, open_breakpoint_event(p.offset, p.watch_length, p.watch_mode, pid, -1));
  return attach_every_cpu(p, prog_fd, [](const abi::ProbeSpec &p, int cpu) {
    return open_breakpoint_event(p.offset, p.watch_length, p.watch_mode, -1, cpu);
  });
}

Result<Events> attach_interval(const abi::ProbeSpec &p, int prog_fd, int, FunctionNames &,
                               Progress &) {
  return attach_one_event(p, prog_fd, open_interval_event(p.interval_ns));
}

using AttachFn = Result<Events> (*)(const abi::ProbeSpec &, int, int, FunctionNames &, Progress &);
struct KindAttach {
  abi::AttachKind kind;
  AttachFn fn;
};
constexpr KindAttach attachers[] = {
    {abi::AttachKind::Begin, attach_trigger},     {abi::AttachKind::End, attach_trigger},
    {abi::AttachKind::Interval, attach_interval}, {abi::AttachKind::Uprobe, attach_uprobe},
    {abi::AttachKind::Uretprobe, attach_uprobe},  {abi::AttachKind::Tracepoint, attach_tracepoint},
    {abi::AttachKind::Kprobe, attach_kprobe},     {abi::AttachKind::Kretprobe, attach_kprobe},
    {abi::AttachKind::Profile, attach_profile},   {abi::AttachKind::Usdt, attach_usdt},
    {abi::AttachKind::Software, attach_perf_event}, {abi::AttachKind::Hardware, attach_perf_event},
    {abi::AttachKind::Watchpoint, attach_watchpoint}, {abi::AttachKind::Hang, attach_trigger},
    {abi::AttachKind::LaunchEnd, attach_trigger},
};

} // namespace

Result<Attached> attach_probe(const abi::ProbeSpec &probe, int prog_fd, int pid,
                              FunctionNames &names, Progress *progress) {
  Progress silent(nullptr, "attaching");
  Progress &p = progress ? *progress : silent;
  for (const auto &a : attachers)
    if (a.kind == probe.kind) {
      size_t before = p.done_count();
      auto out = a.fn(probe, prog_fd, pid, names, p);
      // Kinds that attach at once (one link, one event, a CPU each) are told of here.
      if (out && out->count > p.done_count() - before)
        p.done(out->count - (p.done_count() - before));
      return out;
    }
  return make_error("BUG: unknown attach kind for " + probe.name);
}

} // namespace gpubt::runtime
