// The tracer's GPU injectors (see tracer.h): started with the -c child or attached to running
// processes, their records printed, their results collected into the device maps.
#include "runtime/run/tracer.h"

#include <algorithm>
#include <utility>

#include "runtime/bpf/map_ops.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/output/escape.h"

namespace gpubt::runtime {
namespace {

constexpr char kLiveMapsPrinted[] = "WARNING: the gpu maps printed are as the agent last sent "
                                    "them while the program ran, not their final values\n";

} // namespace

// PROBE matched no kernel launch: said with the nearest of the KERNELS the programs loaded, for a
// name without wildcards (the names come from the traced process: escaped).
std::string Tracer::unmatched_probe_warning(const abi::DeviceProbeSpec &probe,
                                            const std::set<std::string> &kernels) const {
  bool pattern = probe.kernel.find_first_of("*?[") != std::string::npos;
  std::string hint = pattern || !options_.kernel_hint
                         ? ""
                         : options_.kernel_hint(probe.kernel, {kernels.begin(), kernels.end()});
  return probe.name + ": no kernel launch matched '" + probe.kernel + "'" +
         (hint.empty() ? "" : " (" + escape_control(hint) + ")");
}

// A failure is a warning and the program runs uninstrumented, never refused.
void Tracer::start_gpu_run() {
  auto run = prepare_gpu_run(spec_, options_.gpu_backend, options_.verbose, false,
                             live_period_ms(), watch_launches());
  if (!run) {
    err_ << "WARNING: " << run.error() << "\nWARNING: "
         << (spec_.device.probes.empty() ? "gpu probes see no launch: the program runs "
                                           "without gpubt's agent\n"
                                         : "gpu probes are not instrumented: the program runs "
                                           "without them\n");
    return;
  }
  for (const auto &w : run->warnings)
    err_ << "WARNING: " << w << "\n";
  export_gpu_env(*run);
  gpu_run_ = std::make_unique<GpuRun>(std::move(*run));
}

// HOST_MAP_FDS: spec map index -> gpubt's fd of each map host and gpu probes share.
bool Tracer::attach_gpu(const std::map<int, int> &host_map_fds) {
  GpuAttach::Options o;
  o.backend = options_.gpu_backend;
  o.verbose = options_.verbose;
  o.pid = options_.pid > 0 ? options_.pid : 0;
  o.host_map_fds = host_map_fds;
  o.live_ms = live_period_ms();
  o.watch_launches = watch_launches();
  auto gpu = GpuAttach::start(spec_, o, err_);
  if (!gpu) {
    err_ << "ERROR: " << gpu.error() << "\n";
    return false;
  }
  gpu_attach_ = std::move(*gpu);
  return true;
}

bool Tracer::needs_agent() const {
  return !spec_.device.probes.empty() || hang_.has_probes() || launch_probes_.has_probes();
}

// Only for gpu:hang: watching costs every launch of the process about 1.2 us on the H100
// (bench/RESULTS.md), too much to pay for --metrics' gauge alone.
bool Tracer::watch_launches() const { return hang_.has_probes(); }

uint32_t Tracer::live_period_ms() const {
  uint64_t ms = 0;
  if (!spec_.device.maps.empty()) {
    ms = options_.metrics_address.empty() ? 0 : 500;
    // Interval probes read the GPU's maps only where host probes name them (an interval that
    // only ends the run costs no copies).
    bool named = std::any_of(spec_.device.maps.begin(), spec_.device.maps.end(),
                             [](const abi::DeviceMapSpec &m) { return m.host_named; });
    for (const auto &p : spec_.probes)
      if (named && (p.kind == abi::AttachKind::Interval || p.kind == abi::AttachKind::Profile)) {
        // A quarter of the period, so that each read sees values at most that old.
        uint64_t quarter = std::clamp<uint64_t>(p.interval_ns / 4'000'000, 100, 1000);
        ms = ms ? std::min(ms, quarter) : quarter;
      }
  }
  if (watch_launches()) {
    // A launch is seen past a gpu:hang duration at most a quarter of it (500 ms at most) late:
    // the default 2 s names a hang within 2.5 s.
    uint64_t watch = 500;
    for (const auto &p : spec_.probes)
      if (p.kind == abi::AttachKind::Hang)
        watch = std::min(watch, std::max<uint64_t>(p.interval_ns / 4'000'000, 100));
    ms = ms ? std::min(ms, watch) : watch;
  }
  if (launch_probes_.has_probes()) // finished launches reach their probes at most 250 ms late
    ms = ms ? std::min<uint64_t>(ms, 250) : 250;
  return static_cast<uint32_t>(ms);
}

void Tracer::take_launch_records(bool ending) {
  std::lock_guard<std::mutex> lock(maps_mu_);
  auto fire = [this](size_t probe, const auto &ctx) {
    if (!session_)
      return;
    if (auto st = session_->run_probe(probe, &ctx, sizeof ctx); !st)
      err_ << "ERROR: " << spec_.probes[probe].name << ": " << st.error() << "\n";
  };
  if (auto st = hang_.take_from(gpu_pending_, fire); !st && !std::exchange(said_hang_, true))
    err_ << "WARNING: " << st.error() << "\n";
  hang_.fire_waiting(fire, [this](uint32_t pid) { return live_maps_.copied_ns(pid); },
                     abi::live_clock_ns(), ending);
  hang_.forget_ended();
  // --timeline: the launch's span, as a device's launch record draws it (the device sends
  // none where a launch-level probe runs in gpubt: lower_device.cpp), one track per kernel name.
  auto span = [this](uint32_t pid, const abi::FinishedLaunch &l) {
    if (!spec_.timeline)
      return;
    GpuLaunch g;
    g.pid = pid;
    g.kernel_index = launch_tracks_.emplace(l.kernel, launch_tracks_.size()).first->second;
    g.kernel = l.kernel;
    g.start_ns = l.start_ns;
    g.end_ns = l.end_ns;
    output_->gpu_launch(g);
  };
  if (auto st = launch_probes_.take_from(gpu_pending_, fire, span);
      !st && !std::exchange(said_launches_, true))
    err_ << "WARNING: " << st.error() << "\n";
}

void Tracer::report_unwatched() {
  std::lock_guard<std::mutex> lock(maps_mu_);
  if (hang_.has_probes() && !hang_.any_record())
    err_ << "WARNING: gpu:hang: no process sent its running launches: gpu:hang watches CUDA "
            "kernels, through gpubt's CUDA agent, in programs that made a CUDA context (not "
            "Vulkan dispatches: the layer does not watch its submissions)\n";
  if (launch_probes_.has_probes() && !launch_probes_.any_record())
    err_ << "WARNING: no process sent its finished launches: gpu:kretprobe /last_thread/ probes "
            "that read only launch-level values run in gpubt from the CUDA agent's launch "
            "records, in programs that made a CUDA context (not Vulkan dispatches: the layer does "
            "not time its submissions; GPUBT_LAUNCH_PROBES=device keeps such probes in the "
            "shaders)\n";
  if (uint64_t lost = launch_probes_.lost())
    err_ << "WARNING: the agents could not send " << lost
         << " finished launches: launch-level probes did not run for them\n";
}

void Tracer::print_gpu_events() {
  std::vector<uint8_t> got = gpu_attach_ ? gpu_attach_->take_events()
                             : gpu_events_ ? gpu_events_->take()
                                           : std::vector<uint8_t>{};
  if (gpu_pending_.empty()) // mostly: an agent's flood of records is not copied again
    gpu_pending_ = std::move(got);
  else
    gpu_pending_.insert(gpu_pending_.end(), got.begin(), got.end());
  {
    std::lock_guard<std::mutex> lock(maps_mu_);
    if (auto st = live_maps_.take_from(gpu_pending_); !st && !std::exchange(said_live_, true))
      err_ << "WARNING: " << st.error() << "\n";
  }
  // The maps first: a gpu:hang probe fired below reads the copies that came with its look.
  mirror_new_device_maps();
  take_launch_records(false);
  printer_->print_ring_records(gpu_pending_);
  output_->flush();
}

bool Tracer::host_reads_device_maps() const {
  return std::any_of(spec_.device.maps.begin(), spec_.device.maps.end(),
                     [](const abi::DeviceMapSpec &m) { return m.host_reads; });
}

void Tracer::mirror_new_device_maps() {
  if (live_maps_.taken() != mirrored_taken_) // only this thread takes records: no lock to read
    mirror_device_maps();
}

void Tracer::mirror_device_maps() {
  if (!session_ || !host_reads_device_maps())
    return;
  std::vector<MapData> device;
  {
    std::lock_guard<std::mutex> lock(maps_mu_);
    device = device_maps();
    mirrored_taken_ = live_maps_.taken();
  }
  for (const auto &layout : spec_.device.maps) {
    size_t i = layout.map_index;
    if (!layout.host_reads || i >= spec_.maps.size())
      continue;
    const abi::MapSpec &map = spec_.maps[i];
    MapData rows = i < device.size() ? std::move(device[i]) : MapData{};
    fold_device_rows(map, rows);
    auto refused = replace_map_rows(session_->map_fd(int(i)), map, rows);
    if ((!refused || *refused) && !std::exchange(said_mirror_, true))
      err_ << "WARNING: "
           << (!refused ? refused.error()
                        : "host probes read " + std::to_string(rows.size() - *refused) + " of " +
                              map.name + "'s " + std::to_string(rows.size()) +
                              " keys on the GPU: its BPF map holds " +
                              std::to_string(map.max_entries) + " (print() shows them all)")
           << "\n";
  }
}

GpuRunSummary Tracer::finish_gpu() {
  if (gpu_run_) {
    std::vector<uint8_t> live = gpu_events_ ? gpu_events_->stop() : std::vector<uint8_t>{};
    gpu_pending_.insert(gpu_pending_.end(), live.begin(), live.end());
    {
      std::lock_guard<std::mutex> lock(maps_mu_);
      (void)live_maps_.take_from(gpu_pending_);
    }
    mirror_new_device_maps();
    take_launch_records(true);
    printer_->print_ring_records(gpu_pending_);
    if (spec_.device.probes.empty()) // gpu:hang only: the agent watched, it has no results
      return {};
    auto outcome = collect_gpu_results(spec_, *gpu_run_);
    if (!outcome) {
      err_ << "WARNING: " << outcome.error() << "\n";
      std::lock_guard<std::mutex> lock(maps_mu_);
      if (!live_maps_.empty()) // the program died, say: its maps as last copied still print
        err_ << kLiveMapsPrinted;
      return {};
    }
    return apply_gpu_outcome(*outcome);
  }
  if (gpu_attach_) {
    abi::AgentResults results = gpu_attach_->finish(err_);
    std::vector<uint8_t> late = gpu_attach_->take_events(); // sent while detaching
    gpu_pending_.insert(gpu_pending_.end(), late.begin(), late.end());
    {
      std::lock_guard<std::mutex> lock(maps_mu_);
      (void)live_maps_.take_from(gpu_pending_);
    }
    mirror_new_device_maps();
    take_launch_records(true);
    printer_->print_ring_records(gpu_pending_);
    for (const auto &m : results.messages)
      err_ << "gpubt: " << m << "\n";
    GpuOutcome outcome = gpu_outcome(spec_, results);
    GpuRunSummary summary = apply_gpu_outcome(outcome);
    // A detach under a running kernel reads no maps (retired): the last live ones print.
    std::lock_guard<std::mutex> lock(maps_mu_);
    bool no_maps = std::all_of(results.images.begin(), results.images.end(),
                               [](const abi::DeviceImage &img) { return img.maps.empty(); });
    if (no_maps && !live_maps_.empty()) {
      device_final_ = false;
      err_ << kLiveMapsPrinted;
    }
    return summary;
  }
  return {};
}

// The records and lost-event counts print, the warnings go to err_, the device maps join the
// snapshot. Returns whether any gpu probe ran and what ran untraced.
GpuRunSummary Tracer::apply_gpu_outcome(GpuOutcome &outcome) {
  printer_->print_ring_records(outcome.ring_records);
  if (outcome.ring_drops)
    output_->lost_events(outcome.ring_drops);
  for (const auto &w : outcome.warnings)
    err_ << "WARNING: " << w << "\n";
  for (size_t i : outcome.unmatched)
    err_ << "WARNING: " << unmatched_probe_warning(spec_.device.probes[i], outcome.kernels) << "\n";
  if (!outcome.kernel_names.empty()) {
    err_ << "gpubt: kernel names of 64 characters or more are shortened to their first 50, '~' "
            "and a hash of the whole name:\n";
    for (const auto &[shortened, full] : outcome.kernel_names)
      err_ << "  " << escape_control(shortened) << " = " << escape_control(full)
           << "\n"; // the names come from the traced process
  }
  std::lock_guard<std::mutex> lock(maps_mu_);
  device_maps_ = std::move(outcome.maps);
  device_final_ = true;
  return {outcome.launches > 0, outcome.untraced};
}

} // namespace gpubt::runtime
