// Drives a runtime::Session and routes its events to the printers.
#include "driver/trace.h"
#include "driver/attach_point_lookup.h"
#include "driver/exit_codes.h"
#include "driver/exit_report.h"
#include "driver/trace_gpu.h"
#include "driver/trace_gpu_attach.h"
#include "driver/trace_metrics.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>

#include "runtime/bpf/privileges.h"
#include "runtime/bpf/session.h"
#include "runtime/output/event_printer.h"
#include "runtime/output/print_map.h"
#include "runtime/output/tee_output.h"
#include "runtime/output/timeline_output.h"
#include "runtime/process/exit_watch.h"

namespace gpubt::driver {
namespace {

// Every map the script declared, as it is now.
std::vector<runtime::MapData> read_user_maps(const runtime::Session &s) {
  std::vector<runtime::MapData> maps(s.spec().maps.size());
  for (size_t i = 0; i < maps.size(); ++i)
    if (!s.spec().maps[i].internal)
      maps[i] = s.read_map(static_cast<int>(i));
  return maps;
}

// The session's events go to the same decoder as the GPU agent's. The gpu probes' printf records
// (TAKE_GPU_EVENTS: what the agent sent so far) print as they come too, through GPU_PRINTER
// (device values carry no host addresses), not only at the end.
class PrintingHandler : public runtime::EventHandler {
public:
  PrintingHandler(runtime::EventPrinter &printer, const std::ostream &out,
                  const runtime::Session &session, runtime::EventPrinter &gpu_printer,
                  std::function<std::vector<uint8_t>()> take_gpu_events)
      : printer_(printer), out_(out), session_(session), gpu_printer_(gpu_printer),
        take_gpu_events_(std::move(take_gpu_events)) {}
  void on_event(const abi::EventHeader &h, const uint8_t *payload, size_t size) override {
    printer_.print(h, payload, size);
    printer_.output().flush();
  }
  void on_idle() override {
    if (!take_gpu_events_)
      return;
    auto got = take_gpu_events_();
    if (got.empty())
      return;
    if (gpu_pending_.empty())
      gpu_pending_ = std::move(got); // no copy: it may be tens of MiB
    else
      gpu_pending_.insert(gpu_pending_.end(), got.begin(), got.end());
    gpu_printer_.print_ring_records(gpu_pending_); // leaves a record not yet whole
    gpu_printer_.output().flush();
  }
  // What on_idle has not printed yet (a record the rest of which is still to come).
  std::vector<uint8_t> take_gpu_pending() { return std::exchange(gpu_pending_, {}); }
  void print_all_maps() override {
    runtime::print_all_maps(printer_.output(), session_.spec(), read_user_maps(session_),
                            session_.symbolizer());
    printer_.output().flush();
  }

  bool output_failed() const override { return out_.bad(); }

private:
  runtime::EventPrinter &printer_;
  const std::ostream &out_;
  const runtime::Session &session_;
  runtime::EventPrinter &gpu_printer_;
  std::function<std::vector<uint8_t>()> take_gpu_events_;
  std::vector<uint8_t> gpu_pending_;
};

// A misspelt function is an error (bpftrace 0.17 silently attaches nothing) when none of the
// script's uprobes found theirs; when others did, it is a warning: tools like sslsnoop.bt probe
// functions of several library versions, of which a system has some. A wildcard that matches
// nothing is only a warning.
bool report_unmatched(const abi::ProgramSpec &spec, const runtime::Session &s, int pid,
                      std::ostream &err) {
  const auto &unmatched = s.unmatched();
  bool some_found = false;
  for (const auto &p : spec.probes)
    if ((p.kind == abi::AttachKind::Uprobe || p.kind == abi::AttachKind::Uretprobe) && !p.hidden &&
        std::find(unmatched.begin(), unmatched.end(), p.name) == unmatched.end())
      some_found = true;
  bool ok = true;
  for (const auto &name : unmatched) {
    for (const auto &p : spec.probes) {
      if (p.name != name)
        continue;
      if (p.func.find_first_of("*?[") != std::string::npos) {
        err << "WARNING: " << name << ": no functions match '" << p.func << "'\n";
      } else {
        std::string hint = uprobe_function_hint(p.target, p.func, pid);
        err << (some_found ? "WARNING: " : "ERROR: ") << name << ": no function '" << p.func
            << "' in " << p.target << " (" << (hint.empty() ? "" : hint + "; ")
            << "list them with: gpubt -l 'uprobe:" << p.target << ":*')\n";
        ok = ok && some_found;
      }
      break;
    }
  }
  return ok;
}

// A full map refuses new keys; its printout then misses them, so it is said (bpftrace 0.17 says
// nothing; later versions warn).
void report_dropped_keys(const abi::ProgramSpec &spec, const std::vector<uint64_t> &dropped,
                         std::ostream &err) {
  for (size_t i = 0; i < dropped.size(); ++i)
    if (dropped[i] && !spec.maps[i].internal)
      err << "WARNING: Map full; can't update element: map " << spec.maps[i].name << " was full ("
          << spec.maps[i].max_entries
          << " keys): " << dropped[i] << " updates with new keys were dropped; raise "
          << "BPFTRACE_MAP_KEYS_MAX to keep them\n";
}

// bpftrace's rule (since 0.20): a program whose probes are all begin/end ends after begin ran,
// unless it traces a -c program or -p process.
bool only_begin_end(const abi::ProgramSpec &spec, const Options &options) {
  if (!options.child_command.empty() || options.pid > 0 || has_gpu_probes(spec))
    return false;
  return std::all_of(spec.probes.begin(), spec.probes.end(), [](const abi::ProbeSpec &p) {
    return p.kind == abi::AttachKind::Begin || p.kind == abi::AttachKind::End;
  });
}

// A -c program or -p process that is not there is found before any map or probe is made: a
// -c program that cannot be executed is the program's failure (ExitChildFailed, as when its
// exec fails later), a -p process that is not there an error in the options.
int check_target(const Options &options, std::ostream &err) {
  if (!options.child_command.empty()) {
    if (auto path = runtime::resolve_command(options.child_command); !path) {
      err << "ERROR: " << path.error() << "\n";
      return ExitChildFailed;
    }
  } else if (options.pid > 0) {
    if (auto fd = runtime::open_pidfd(options.pid); !fd) {
      err << "ERROR: " << fd.error() << "\n";
      return ExitUserError;
    }
  }
  return ExitOk;
}

// bpftrace's cap: each probe costs an attach (10,000 BEGIN probes took 18 s) and kernel memory.
// Checked on the script's probes, then again once wildcards have matched functions.
bool check_probe_count(uint64_t count, const Options &options, std::ostream &err) {
  if (count <= options.env.max_probes)
    return true;
  err << "ERROR: Can't attach to " << count << " probes because it exceeds the current limit of "
      << options.env.max_probes << " probes.\nYou can increase the limit through the "
      << "BPFTRACE_MAX_PROBES environment variable, but BE CAREFUL since a high number of probes "
         "attached can cause your system to crash.\n";
  return false;
}

// GPUBT_PROGRESS_MS: how long attaching or detaching goes on before it says how far it is.
Result<uint64_t> attach_progress_after_ns() {
  const char *v = std::getenv("GPUBT_PROGRESS_MS");
  if (!v)
    return runtime::Progress::kAfterNs;
  char *end = nullptr;
  errno = 0;
  unsigned long long ms = std::strtoull(v, &end, 10);
  if (!*v || *end || errno || *v == '-' || ms > UINT64_MAX / 1'000'000)
    return make_error(std::string("GPUBT_PROGRESS_MS='") + v + "' is not a number of milliseconds");
  return uint64_t(ms) * 1'000'000;
}

} // namespace

bool child_stdout_to_stderr(const Options &options) {
  return runtime::is_machine_readable(options.format) && options.output_path.empty();
}

int trace(const abi::ProgramSpec &spec, const Options &options, std::ostream &out,
          std::ostream &err) {
  if (int target = check_target(options, err); target != ExitOk)
    return target;
  if (!check_probe_count(spec.probes.size(), options, err))
    return ExitUserError;
  // -p: how the process ends, if it does before the trace (listening before anything attaches).
  auto target_exit = options.pid > 0 ? runtime::ProcessExitWatch::start(options.pid) : nullptr;
  std::unique_ptr<runtime::MetricsEndpoint> metrics;
  if (!listen_for_metrics(options, metrics, err))
    return ExitUserError;
  auto output = runtime::make_output(options.format, out, {options.raw_strings});
  if (!options.timeline.path.empty()) { // put in place when the trace ends, however it ends
    runtime::TimelineOptions timeline_options = options.timeline;
    timeline_options.report = options.bt.quiet ? nullptr : &err;
    if (spec.spans.empty() && spec.formats.empty() && !has_gpu_probes(spec))
      err << "WARNING: --timeline: this script makes no timeline events: a span needs a "
             "function probed at both entry and return (uprobe and uretprobe), an instant a "
             "printf(), a GPU span a gpu probe\n";
    auto timeline = runtime::TimelineOutput::create(timeline_options);
    if (!timeline) {
      err << "ERROR: " << timeline.error() << "\n";
      return ExitUserError;
    }
    output = runtime::make_tee_output(std::move(output), std::move(*timeline));
  }
  // Without -c, gpu probes attach to the agents of processes already running: with no host
  // probe, no BPF either (a user may attach to their own processes without CAP_BPF).
  bool attach_gpu = has_gpu_probes(spec) && options.child_command.empty();
  if (attach_gpu && spec.probes.empty()) {
    if (metrics)
      serve_metrics(*metrics, spec, nullptr, options, spec.device.probes.size());
    return trace_gpu_attached(spec, options, target_exit.get(), *output, err);
  }
  if (auto st = runtime::check_bpf_privileges(); !st) {
    err << "ERROR: " << st.error() << "\n";
    return ExitUserError;
  }
  std::unique_ptr<runtime::GpuRun> gpu; // before the child is forked: it inherits the agent
  if (has_gpu_probes(spec) && !attach_gpu) {
    gpu = start_gpu_run(spec, options, err);
    if (spec.probes.empty()) {
      if (metrics)
        serve_metrics(*metrics, spec, nullptr, options, gpu ? spec.device.probes.size() : 0);
      return trace_gpu_only(spec, options, gpu.get(), *output, err);
    }
  }
  runtime::SessionOptions so;
  so.pid = options.pid;
  so.command = options.child_command;
  so.child_stdout_to_stderr = child_stdout_to_stderr(options);
  so.verbose = options.verbose;
  so.progress = options.bt.quiet ? nullptr : &err;
  auto progress_after = attach_progress_after_ns();
  if (!progress_after) {
    err << "ERROR: " << progress_after.error() << "\n";
    return ExitUserError;
  }
  so.progress_after_ns = *progress_after;
  if (gpu) // maps host probes write and gpu probes read: the agent in the child reads them
    for (const auto &h : gpu->config.host_maps)
      so.inherited_maps.push_back(spec.device.maps.at(h.device_map).map_index);
  auto session = runtime::Session::create(spec, so);
  if (!session) {
    err << "ERROR: " << session.error() << "\n";
    return ExitUserError;
  }
  auto &s = **session;
  if (gpu && !gpu->config.host_maps.empty())
    if (auto st = gpu->set_host_map_fds(spec, s.inherited_fds()); !st)
      err << "WARNING: " << st.error() << ": gpu probes see no host values\n";
  std::optional<GpuEventThread> gpu_events; // the child exists now: only it keeps the agent's end
  if (gpu) {
    gpu->close_child_end();
    gpu_events.emplace(*gpu);
  }
  auto attached = s.attach();
  if (!attached) {
    err << "ERROR: " << attached.error() << "\n";
    return ExitUserError;
  }
  if (!report_unmatched(spec, s, options.pid, err) || !check_probe_count(*attached, options, err))
    return ExitUserError;
  std::unique_ptr<runtime::GpuAttach> gpu_attach;
  if (attach_gpu) {
    std::map<int, int> shared; // maps host probes and gpu probes both use
    for (const auto &h : abi::host_maps_of(spec)) {
      int index = spec.device.maps.at(h.device_map).map_index;
      shared[index] = s.map_fd(index);
    }
    gpu_attach = attach_gpu_probes(spec, options, shared, err);
    if (!gpu_attach)
      return ExitUserError;
  }
  for (const auto &line : s.skipped())
    err << "WARNING: " << line << "\n";
  if (*attached == 0 && !gpu && !gpu_attach) {
    out << "No probes to attach\n";
    return ExitUserError;
  }
  size_t gpu_probes = gpu || gpu_attach ? spec.device.probes.size() : 0;
  if (!options.bt.quiet)
    output->attached_probes(*attached + gpu_probes);
  output->flush();
  if (metrics)
    serve_metrics(*metrics, spec, &s, options, *attached + gpu_probes);
  // bpftrace's runtime tests wait for this line before starting their AFTER command.
  if (std::getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED"))
    err << "__BPFTRACE_NOTIFY_PROBES_ATTACHED" << std::endl;
  if (options.verbose) // bpftrace -v's "Attaching PROBE" lines; late ones come from the session
    for (const auto &line : s.pending())
      err << "Attaching " << line << "\n";

  runtime::EventPrinter printer(spec, *output, s.symbolizer(),
                                [&s](int map) { return s.read_map(map); },
                                {true, options.env.cat_bytes_max, &err});
  runtime::EventPrinter gpu_printer(spec, *output, nullptr); // no host addresses
  std::function<std::vector<uint8_t>()> take_gpu_events;
  if (gpu_events)
    take_gpu_events = [&gpu_events] { return gpu_events->take(); };
  else if (gpu_attach)
    take_gpu_events = [&gpu_attach] { return gpu_attach->take_events(); };
  PrintingHandler handler(printer, out, s, gpu_printer, take_gpu_events);
  s.run_begin();
  auto stop = only_begin_end(spec, options) && !gpu && !gpu_attach ? s.drain(handler)
                                                                    : s.run(handler);
  s.run_end(handler);
  metrics.reset(); // its scrapes read the session
  for (const auto &line : s.load_warnings())
    err << "WARNING: " << line << "\n";
  if (uint64_t lost = s.lost_events())
    output->lost_events(lost);
  report_dropped_keys(spec, s.dropped_keys(), err);

  std::vector<runtime::MapData> maps = read_user_maps(s);
  GpuRunSummary gpu_ran;
  if (gpu) {
    auto live = handler.take_gpu_pending();
    auto rest = gpu_events->stop();
    live.insert(live.end(), rest.begin(), rest.end());
    gpu_printer.print_ring_records(live);
    gpu_ran = finish_gpu_run(spec, *gpu, gpu_printer, maps, err);
  }
  if (gpu_attach) {
    gpu_ran = detach_gpu_probes(spec, *gpu_attach, gpu_printer, maps, err);
  }
  int files = finish_output_files(*output, err);
  if (options.print_maps_on_exit)
    runtime::print_all_maps(*output, s.spec(), maps, s.symbolizer());
  output->flush();
  // After exit() or Ctrl-C gpubt ends the child itself: only a child that ended the trace counts.
  std::optional<runtime::ChildExit> ended;
  if (stop == runtime::StopReason::ChildExited)
    ended = target_exit ? target_exit->ended() : s.child_exit();
  int child = report_child_exit(ended, err);
  int gpu_status = has_gpu_probes(spec) ? report_gpu_probes_ran(gpu_ran.ran, err) : ExitOk;
  return first_failure({child, gpu_status, files, report_partially_traced(gpu_ran, err)});
}

} // namespace gpubt::driver
