// One trace run, whatever its probes: the host session (BPF), the GPU injectors (-c: the program
// starts with them; else attached to running processes), one loop that waits on all of them
// (ring buffers, the agents' records, the child's or -p process's pidfd, signals), one event
// printer, and snapshot(): host and device maps merged, which interval, END's print(@map),
// SIGUSR1, --metrics and the exit printout read.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "runtime/abi/live_maps.h"
#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/unique_fd.h"
#include "runtime/bpf/session.h"
#include "runtime/gpu/cuda/gpu_attach.h"
#include "runtime/gpu/gpu_events.h"
#include "runtime/gpu/gpu_inject.h"
#include "runtime/output/event_printer.h"
#include "runtime/output/metrics_endpoint.h"
#include "runtime/process/child_process.h"
#include "runtime/process/exit_watch.h"
#include "runtime/process/stop_signals.h"
#include "runtime/run/exit_report.h"
#include "runtime/run/hang_watch.h"
#include "runtime/run/launch_probes.h"
#include "runtime/run/run_options.h"

namespace gpubt::runtime {

class Tracer : private EventHandler {
public:
  // SPEC outlives the tracer. OUT: the trace's output (-o FILE or stdout), ERR: messages.
  Tracer(const abi::ProgramSpec &spec, RunOptions options, std::ostream &out, std::ostream &err);
  ~Tracer() override;

  // Sets up, traces until the run ends (exit(), Ctrl-C, SIGTERM, the program's end), prints
  // every map and says how the program ended. Returns gpubt's exit status (exit_codes.h).
  int run();

  // Every map the script declared, indexed like spec.maps (internal maps empty): the host's as
  // they are now (as they were when the session ended, after it), the devices' rows added once
  // the injectors handed them over. Safe on --metrics' thread.
  std::vector<MapData> snapshot() const;

private:
  // tracer.cpp: the run's phases.
  int set_up();
  int set_up_gpu_attached(); // gpu probes only, no -c: attached to running processes
  int set_up_gpu_child();    // gpu probes only, -c: no BPF, the child and its injectors
  int set_up_session();      // host probes (and gpu probes with them)
  StopReason loop(); // run_loop.h
  bool only_begin_end() const; // begin/end probes only: the run ends after begin
  int finish(StopReason stop);
  MapData snapshot_map(int index) const; // print(@map)
  std::vector<MapData> read_host_maps() const;
  void on_event(const abi::EventHeader &h, const uint8_t *payload, size_t size) override;
  void print_all_maps() override; // SIGUSR1
  bool output_failed() const override { return out_.bad(); }

  // tracer_gpu.cpp: the injectors.
  void start_gpu_run(); // -c, before the child is forked
  bool attach_gpu(const std::map<int, int> &host_map_fds);
  void print_gpu_events(); // what the agents sent, printed as it comes (their live maps kept)
  // How often the agents send the device maps (and, watching, their running launches) while the
  // program runs: when something reads them then (interval probes, --metrics, gpu:hang); 0:
  // only at the end.
  uint32_t live_period_ms() const;
  // Whether the agents watch their launches (gpu:hang probes; --metrics with gpu probes).
  bool watch_launches() const;
  bool needs_agent() const; // gpu probes or gpu:hang probes
  // The RunningLaunches and FinishedLaunches records among gpu_pending_ taken, the gpu:hang
  // probes due and the launch-level probes of each finished launch run. ENDING: the gpu:hang
  // probes still waiting for maps run too.
  void take_launch_records(bool ending);
  // gpu:hang probes, and no agent said what it runs; launch-level probes, and no agent sent a
  // finished launch (or some were lost).
  void report_unwatched();
  std::vector<MapData> device_maps() const; // maps_mu_ held: final, else live, else none,
                                            // less what host probes cleared or zeroed
  std::vector<MapData> raw_device_maps() const; // the same, as the GPU holds them
  void reset_device_map(int index, bool zero);  // a host probe's clear() or zero()
  // The GPU's values of the aggregations host probes read (DeviceMapSpec::host_reads) into their
  // BPF maps, where those reads look: at each live copy the agents send and before END.
  void mirror_device_maps();
  void mirror_new_device_maps(); // the same, only where a live copy came since the last one
  bool host_reads_device_maps() const; // some host probe reads a map gpu probes write
  // Their results: records, warnings, device maps; whether any ran and what ran untraced.
  GpuRunSummary finish_gpu();
  GpuRunSummary apply_gpu_outcome(GpuOutcome &outcome);
  std::string unmatched_probe_warning(const abi::DeviceProbeSpec &probe,
                                      const std::set<std::string> &kernels) const;

  // tracer_checks.cpp: refusals and warnings around attaching.
  int check_target();
  bool check_probe_count(uint64_t count);
  bool report_unmatched();
  void report_dropped_keys();

  // tracer_metrics.cpp: --metrics.
  bool listen_for_metrics();
  void serve_metrics(uint64_t attached);

  const abi::ProgramSpec &spec_;
  RunOptions options_;
  std::ostream &out_, &err_;
  std::unique_ptr<ProcessExitWatch> target_exit_; // -p: how it ended
  UniqueFd target_pidfd_; // -p without a session (the session has its own)
  std::unique_ptr<Output> output_;
  std::unique_ptr<EventPrinter> printer_;
  std::unique_ptr<GpuRun> gpu_run_; // -c with gpu probes: the injected program's files
  std::unique_ptr<ChildProcess> child_; // -c without a session
  std::unique_ptr<GpuEventReader> gpu_events_;
  std::unique_ptr<GpuAttach> gpu_attach_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<MetricsEndpoint> metrics_; // after session_: its scrapes read it
  std::optional<StopSignals> signals_;
  std::vector<uint8_t> gpu_pending_; // agents' bytes not yet whole records
  mutable std::mutex maps_mu_;
  std::optional<std::vector<MapData>> host_final_; // the session's maps when it ended
  std::vector<MapData> device_maps_;               // from the injectors' results
  bool device_final_ = false;                      // device_maps_ came
  bool said_live_ = false;
  HangWatch hang_; // the agents' running launches (maps_mu_ held), gpu:hang's thresholds
  bool said_hang_ = false;
  LaunchProbes launch_probes_; // the agents' finished launches, launch-level gpu:kretprobes
  bool said_launches_ = false;
  std::map<std::string, uint32_t> launch_tracks_; // --timeline: kernel -> its track's number
  // Per map: the GPU's rows at a host probe's last clear() or zero(), and which it was.
  std::map<int, std::pair<MapData, bool>> device_bases_;
  abi::LiveMaps live_maps_; // the agents' latest while the program runs (live_maps.h)
  // live_maps_ decoded (raw_device_maps), as of its taken() record count: once per record.
  mutable std::vector<MapData> live_decoded_;
  mutable uint64_t live_decoded_taken_ = 0;
  uint64_t mirrored_taken_ = 0; // live_maps_.taken() at the last mirror_device_maps()
  bool said_mirror_ = false;
};

} // namespace gpubt::runtime
