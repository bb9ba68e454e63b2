// The run's phases (see tracer.h): set up for the script's probes, one loop, the end.
#include "runtime/run/tracer.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/bpf/privileges.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/output/print_map.h"
#include "runtime/output/tee_output.h"
#include "runtime/output/timeline_output.h"
#include "runtime/run/exit_codes.h"
#include "runtime/run/exit_report.h"
#include "runtime/run/run_loop.h"

namespace gpubt::runtime {
namespace {

bool has_gpu_probes(const abi::ProgramSpec &spec) { return !spec.device.probes.empty(); }

// bpftrace's runtime tests wait for this line before starting their AFTER command.
void notify_attached(std::ostream &err) {
  if (std::getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED"))
    err << "__BPFTRACE_NOTIFY_PROBES_ATTACHED" << std::endl;
}

} // namespace

Tracer::Tracer(const abi::ProgramSpec &spec, RunOptions options, std::ostream &out,
               std::ostream &err)
    : spec_(spec), options_(std::move(options)), out_(out), err_(err), hang_(spec),
      launch_probes_(spec) {
  // gpu:hang probes that read gpu maps wait for a copy after their look: at most three live
  // periods (a copy is made each period unless the GPU has no room for the copy kernel), 1 s
  // at least.
  uint32_t live = live_period_ms();
  if (live && host_reads_device_maps())
    hang_.wait_for_maps(std::max<uint64_t>(3ull * live, 1000) * 1'000'000);
}

Tracer::~Tracer() = default;

int Tracer::run() {
  if (int target = check_target(); target != ExitOk)
    return target;
  if (!check_probe_count(spec_.probes.size()))
    return ExitUserError;
  // -p: how the process ends, if it does before the trace (listening before anything attaches).
  if (options_.pid > 0)
    target_exit_ = ProcessExitWatch::start(options_.pid);
  if (!listen_for_metrics())
    return ExitUserError;
  output_ = make_output(options_.format, out_, {options_.raw_strings, options_.output_style, &err_});
  if (!options_.timeline.path.empty()) { // put in place when the trace ends, however it ends
    TimelineOptions timeline_options = options_.timeline;
    timeline_options.report = options_.quiet ? nullptr : &err_;
    if (spec_.spans.empty() && spec_.formats.empty() && !has_gpu_probes(spec_))
      err_ << "WARNING: --timeline: this script makes no timeline events: a span needs a "
              "function probed at both entry and return (uprobe and uretprobe), an instant a "
              "printf(), a GPU span a gpu probe\n";
    auto timeline = TimelineOutput::create(timeline_options);
    if (!timeline) {
      err_ << "ERROR: " << timeline.error() << "\n";
      return ExitUserError;
    }
    output_ = make_tee_output(std::move(output_), std::move(*timeline));
  }
  if (int st = set_up(); st != ExitOk)
    return st;
  return finish(loop());
}

int Tracer::set_up() {
  // Without -c, gpu probes attach to the agents of processes already running: with no host
  // probe, no BPF either (a user may attach to their own processes without CAP_BPF).
  bool attach = needs_agent() && options_.command.empty();
  if (attach && spec_.probes.empty())
    return set_up_gpu_attached();
  if (auto st = check_bpf_privileges(); !st) {
    err_ << "ERROR: " << st.error() << "\n";
    return ExitUserError;
  }
  if (needs_agent() && !attach) {
    start_gpu_run(); // before the child is forked: it inherits the injectors' environment
    if (spec_.probes.empty())
      return set_up_gpu_child();
  }
  return set_up_session();
}

int Tracer::set_up_gpu_attached() {
  if (metrics_)
    serve_metrics(spec_.device.probes.size());
  if (options_.pid > 0) {
    auto fd = open_pidfd(options_.pid);
    if (!fd) {
      err_ << "ERROR: " << fd.error() << "\n";
      return ExitUserError;
    }
    target_pidfd_ = std::move(*fd);
  }
  signals_.emplace(false, true); // before attaching: each process attached is detached
  if (!attach_gpu({}))
    return ExitUserError;
  if (!options_.quiet)
    output_->attached_probes(spec_.device.probes.size());
  output_->flush();
  notify_attached(err_);
  printer_ = std::make_unique<EventPrinter>(spec_, *output_, nullptr); // no host addresses
  return ExitOk;
}

int Tracer::set_up_gpu_child() {
  if (metrics_)
    serve_metrics(gpu_run_ ? spec_.device.probes.size() : 0);
  auto child = ChildProcess::spawn(options_.command, options_.child_stdout_to_stderr);
  if (!child) {
    err_ << "ERROR: " << child.error() << "\n";
    return ExitTraceFailed;
  }
  child_ = std::move(*child);
  if (gpu_run_)
    gpu_run_->close_child_end();
  if (!options_.quiet)
    output_->attached_probes(gpu_run_ ? spec_.device.probes.size() : 0);
  output_->flush();
  // The child (forked already) gets Ctrl-C too (same process group): gpubt waits for it to exit
  // either way and prints after it; its death by it is no failure.
  signals_.emplace(false, true);
  if (auto st = child_->start(); !st) {
    err_ << "ERROR: " << st.error() << "\n";
    return ExitTraceFailed;
  }
  printer_ = std::make_unique<EventPrinter>(spec_, *output_, nullptr); // no host addresses
  gpu_events_ = std::make_unique<GpuEventReader>(gpu_run_ ? gpu_run_->events.get() : -1);
  return ExitOk;
}

int Tracer::set_up_session() {
  SessionOptions so;
  so.pid = options_.pid;
  so.command = options_.command;
  so.child_stdout_to_stderr = options_.child_stdout_to_stderr;
  so.verbose = options_.verbose;
  so.progress = options_.quiet ? nullptr : &err_;
  so.progress_after_ns = options_.progress_after_ns;
  if (gpu_run_) // maps host probes write and gpu probes read: the agent in the child reads them
    for (const auto &h : gpu_run_->config.host_maps)
      so.inherited_maps.push_back(spec_.device.maps.at(h.device_map).map_index);
  auto session = Session::create(spec_, so);
  if (!session) {
    err_ << "ERROR: " << session.error() << "\n";
    return ExitUserError;
  }
  session_ = std::move(*session);
  Session &s = *session_;
  if (gpu_run_ && !gpu_run_->config.host_maps.empty())
    if (auto st = gpu_run_->set_host_map_fds(spec_, s.inherited_fds()); !st)
      err_ << "WARNING: " << st.error() << ": gpu probes see no host values\n";
  if (gpu_run_) { // the child exists now: only it keeps the agent's end
    gpu_run_->close_child_end();
    gpu_events_ = std::make_unique<GpuEventReader>(gpu_run_->events.get());
  }
  auto attached = s.attach();
  if (!attached) {
    err_ << "ERROR: " << attached.error() << "\n";
    return ExitUserError;
  }
  if (!report_unmatched() || !check_probe_count(*attached))
    return ExitUserError;
  if (needs_agent() && options_.command.empty()) {
    std::map<int, int> shared; // maps host probes and gpu probes both use
    for (const auto &h : abi::host_maps_of(spec_)) {
      int index = spec_.device.maps.at(h.device_map).map_index;
      shared[index] = s.map_fd(index);
    }
    if (!attach_gpu(shared))
      return ExitUserError;
  }
  for (const auto &line : s.skipped())
    err_ << "WARNING: " << line << "\n";
  if (*attached == 0 && !gpu_run_ && !gpu_attach_) {
    out_ << "No probes to attach\n";
    return ExitUserError;
  }
  size_t gpu_probes = gpu_run_ || gpu_attach_ ? spec_.device.probes.size() : 0;
  if (!options_.quiet)
    output_->attached_probes(*attached + gpu_probes);
  output_->flush();
  if (metrics_)
    serve_metrics(*attached + gpu_probes);
  notify_attached(err_);
  if (options_.verbose) // bpftrace -v's "Attaching PROBE" lines; late ones come from the session
    for (const auto &line : s.pending())
      err_ << "Attaching " << line << "\n";
  printer_ = std::make_unique<EventPrinter>(
      spec_, *output_, s.symbolizer(), [this](int map) { return snapshot_map(map); },
      UserActionOptions{true, options_.cat_bytes_max, &err_});
  s.run_begin();
  signals_.emplace(true, false); // then the loop starts the child
  return ExitOk;
}

StopReason Tracer::loop() {
  if (only_begin_end()) // ends after begin: what it queued, no loop
    return session_->drain(*this);
  LoopSources src;
  src.session = session_.get();
  src.handler = this;
  src.child = child_.get();
  src.exit_fd = target_pidfd_.get();
  if (gpu_events_ || gpu_attach_) {
    src.events_fd = gpu_events_ ? gpu_events_->ready_fd() : -1;
    src.print_events = [this] { print_gpu_events(); };
  }
  return run_loop(src);
}

int Tracer::finish(StopReason stop) {
  // The GPU's final values first: END's print() and reads see them (a detach also copies the
  // maps host probes read into their BPF maps).
  GpuRunSummary gpu_ran = finish_gpu();
  mirror_device_maps(); // exact for END's reads
  if (session_) {
    signals_.reset(); // as bpftrace: END runs with the default handlers
    session_->run_end(*this);
    metrics_.reset(); // its scrapes read the session
    for (const auto &line : session_->load_warnings())
      err_ << "WARNING: " << line << "\n";
    if (uint64_t lost = session_->lost_events())
      output_->lost_events(lost);
    report_dropped_keys();
    auto maps = read_host_maps();
    std::lock_guard<std::mutex> lock(maps_mu_);
    host_final_ = std::move(maps);
  }
  report_unwatched();
  int files = finish_output_files(*output_, err_);
  if (options_.print_maps_on_exit)
    runtime::print_all_maps(*output_, session_ ? session_->spec() : spec_, snapshot(),
                            session_ ? session_->symbolizer() : nullptr);
  output_->flush();
  // After exit() or Ctrl-C gpubt ends the child itself: only a child that ended the trace counts.
  std::optional<ChildExit> ended;
  if (stop == StopReason::ChildExited) {
    if (target_exit_)
      ended = target_exit_->ended();
    else if (session_)
      ended = session_->child_exit();
    else if (child_ && !stop_signalled())
      ended = child_->exit_info();
  }
  int child = report_child_exit(ended, err_);
  int gpu_status = has_gpu_probes(spec_) ? report_gpu_probes_ran(gpu_ran.ran, err_) : ExitOk;
  int script = session_ ? session_->exit_code() : ExitOk; // exit(code)
  return first_failure(
      {script, child, gpu_status, files, report_partially_traced(gpu_ran, err_)});
}

// bpftrace's rule (since 0.20): a program whose probes are all begin/end ends after begin ran,
// unless it traces a -c program or -p process.
bool Tracer::only_begin_end() const {
  if (!session_ || !options_.command.empty() || options_.pid > 0 || has_gpu_probes(spec_))
    return false;
  return std::all_of(spec_.probes.begin(), spec_.probes.end(), [](const abi::ProbeSpec &p) {
    return p.kind == abi::AttachKind::Begin || p.kind == abi::AttachKind::End;
  });
}

std::vector<MapData> Tracer::read_host_maps() const {
  std::vector<MapData> maps(spec_.maps.size());
  for (size_t i = 0; session_ && i < maps.size(); ++i)
    if (!spec_.maps[i].internal)
      maps[i] = session_->read_map(static_cast<int>(i));
  return maps;
}

std::vector<MapData> Tracer::snapshot() const {
  std::vector<MapData> maps, device;
  bool ended = false;
  {
    std::lock_guard<std::mutex> lock(maps_mu_);
    if ((ended = host_final_.has_value()))
      maps = *host_final_;
    device = device_maps();
  }
  if (!ended)
    maps = read_host_maps();
  // A map host probes read holds a copy of the GPU's values (mirror_device_maps): they print
  // from the device's rows alone, the latest.
  for (const auto &layout : spec_.device.maps)
    if (layout.host_reads && size_t(layout.map_index) < maps.size())
      maps[layout.map_index].clear();
  if (!device.empty())
    merge_device_maps(spec_, device, maps);
  return maps;
}

std::vector<MapData> Tracer::raw_device_maps() const {
  if (device_final_ || live_maps_.empty())
    return device_maps_;
  if (live_decoded_taken_ != live_maps_.taken()) {
    live_decoded_ = gpu_outcome(spec_, live_maps_.results()).maps;
    live_decoded_taken_ = live_maps_.taken();
  }
  return live_decoded_;
}

std::vector<MapData> Tracer::device_maps() const {
  std::vector<MapData> maps = raw_device_maps();
  for (const auto &[index, base] : device_bases_)
    if (size_t(index) < maps.size())
      subtract_device_rows(base.first, base.second, maps[index]);
  return maps;
}

// The GPU's part of a map cannot be cleared from here while kernels update it: its values now
// become the base the later reads subtract (the host's part, a BPF map, the session cleared).
void Tracer::reset_device_map(int index, bool zero) {
  bool on_gpu = false;
  for (const auto &layout : spec_.device.maps)
    on_gpu |= layout.map_index == index && !layout.from_host && !layout.to_host;
  if (!on_gpu)
    return;
  std::lock_guard<std::mutex> lock(maps_mu_);
  std::vector<MapData> raw = raw_device_maps();
  device_bases_[index] = {size_t(index) < raw.size() ? raw[index] : MapData{}, zero};
}

MapData Tracer::snapshot_map(int index) const {
  {
    std::lock_guard<std::mutex> lock(maps_mu_);
    if (!device_final_ && live_maps_.empty() && device_bases_.empty() && !host_final_)
      return session_->read_map(index);
  }
  return snapshot().at(index);
}

void Tracer::on_event(const abi::EventHeader &h, const uint8_t *payload, size_t size) {
  if (h.kind == uint32_t(abi::EventKind::ClearMap) || h.kind == uint32_t(abi::EventKind::ZeroMap))
    reset_device_map(int(h.index), h.kind == uint32_t(abi::EventKind::ZeroMap));
  printer_->print(h, payload, size);
  output_->flush();
}

void Tracer::print_all_maps() {
  runtime::print_all_maps(*output_, session_->spec(), snapshot(), session_->symbolizer());
  output_->flush();
}

} // namespace gpubt::runtime
