// The gpu half of a trace run (see trace_gpu.h).
#include "driver/trace_gpu.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>

#include "driver/exit_codes.h"
#include "driver/exit_report.h"
#include "driver/trace.h"
#include "frontend/nearest_name.h"
#include "runtime/output/escape.h"
#include "runtime/abi/device_abi.h"
#include "runtime/process/child_process.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/output/print_map.h"

namespace gpubt::driver {
namespace {

// Reads what is there now (blocking only when WAIT); false at EOF or error.
bool read_some(int fd, std::vector<uint8_t> &into, bool wait) {
  uint8_t buf[65536];
  ssize_t n = recv(fd, buf, sizeof buf, wait ? 0 : MSG_DONTWAIT);
  if (n > 0)
    into.insert(into.end(), buf, buf + n);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

volatile sig_atomic_t g_interrupted = 0;
void note_interrupt(int) { g_interrupted = 1; }

void drain_now(int fd, std::vector<uint8_t> &into) {
  while (fd >= 0) {
    size_t before = into.size();
    if (!read_some(fd, into, false) || into.size() == before)
      return;
  }
}

} // namespace

GpuEventThread::GpuEventThread(runtime::GpuRun &run) : fd_(run.events.get()) {
  if (fd_ < 0)
    return;
  thread_ = std::thread([this] {
    std::vector<uint8_t> got;
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      bool open = poll(&p, 1, 100) <= 0 || read_some(fd_, got, false);
      std::lock_guard<std::mutex> lock(mu_);
      bytes_.insert(bytes_.end(), got.begin(), got.end());
      got.clear();
      if (!open)
        return;
    }
  });
}

std::vector<uint8_t> GpuEventThread::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(bytes_, {});
}

GpuEventThread::~GpuEventThread() { stop(); }

std::vector<uint8_t> GpuEventThread::stop() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  drain_now(fd_, bytes_);
  return std::exchange(bytes_, {});
}

bool has_gpu_probes(const abi::ProgramSpec &spec) { return !spec.device.probes.empty(); }

std::unique_ptr<runtime::GpuRun> start_gpu_run(const abi::ProgramSpec &spec, const Options &options,
                                               std::ostream &err) {
  auto run = runtime::prepare_gpu_run(spec, options.gpu_backend, options.verbose);
  if (!run) {
    err << "WARNING: " << run.error() << "\nWARNING: gpu probes are not instrumented: the program "
        << "runs without them\n";
    return nullptr;
  }
  runtime::export_gpu_env(*run);
  return std::make_unique<runtime::GpuRun>(std::move(*run));
}

// PROBE matched no kernel launch: said with the nearest of the KERNELS the program loaded, for a
// name without wildcards (the names come from the traced process).
static std::string unmatched_probe_warning(const abi::DeviceProbeSpec &probe,
                                           const std::set<std::string> &kernels) {
  bool pattern = probe.kernel.find_first_of("*?[") != std::string::npos;
  std::string hint = pattern ? "" : frontend::did_you_mean_hint(frontend::nearest_names(
                                        probe.kernel, {kernels.begin(), kernels.end()}, 3));
  return probe.name + ": no kernel launch matched '" + probe.kernel + "'" +
         (hint.empty() ? "" : " (" + runtime::escape_control(hint) + ")");
}

GpuRunSummary apply_gpu_outcome(const abi::ProgramSpec &spec, runtime::GpuOutcome &outcome,
                                runtime::EventPrinter &printer,
                                std::vector<runtime::MapData> &maps, std::ostream &err) {
  printer.print_ring_records(outcome.ring_records);
  if (outcome.ring_drops)
    printer.output().lost_events(outcome.ring_drops);
  for (const auto &w : outcome.warnings)
    err << "WARNING: " << w << "\n";
  for (size_t i : outcome.unmatched)
    err << "WARNING: " << unmatched_probe_warning(spec.device.probes[i], outcome.kernels) << "\n";
  if (!outcome.kernel_names.empty()) {
    err << "gpubt: kernel names of 64 characters or more are shortened to their first 50, '~' "
           "and a hash of the whole name:\n";
    for (const auto &[shortened, full] : outcome.kernel_names)
      err << "  " << runtime::escape_control(shortened) << " = " << runtime::escape_control(full)
          << "\n"; // the names come from the traced process
  }
  runtime::merge_device_maps(spec, outcome.maps, maps);
  return {outcome.launches > 0, outcome.untraced};
}

GpuRunSummary finish_gpu_run(const abi::ProgramSpec &spec, const runtime::GpuRun &run,
                             runtime::EventPrinter &printer, std::vector<runtime::MapData> &maps,
                             std::ostream &err) {
  auto outcome = runtime::collect_gpu_results(spec, run);
  if (!outcome) {
    err << "WARNING: " << outcome.error() << "\n";
    return {};
  }
  return apply_gpu_outcome(spec, *outcome, printer, maps, err);
}

int trace_gpu_only(const abi::ProgramSpec &spec, const Options &options, runtime::GpuRun *run,
                   runtime::Output &out, std::ostream &err) {
  auto child = runtime::ChildProcess::spawn(options.child_command, child_stdout_to_stderr(options));
  if (!child) {
    err << "ERROR: " << child.error() << "\n";
    return ExitTraceFailed;
  }
  if (run)
    run->close_child_end();
  if (!options.bt.quiet)
    out.attached_probes(run ? spec.device.probes.size() : 0);
  out.flush();
  // The child (forked already) gets Ctrl-C; we print after it, and its death by it is no failure.
  std::signal(SIGINT, note_interrupt);
  std::signal(SIGTERM, note_interrupt);
  if (auto st = (*child)->start(); !st) {
    err << "ERROR: " << st.error() << "\n";
    return ExitTraceFailed;
  }
  // Ctrl-C reaches the child too (same process group): wait for it to exit either way, and
  // print the device's printf records as the agent sends them.
  int events = run ? run->events.get() : -1;
  runtime::EventPrinter printer(spec, out, nullptr); // device values carry no host addresses
  std::vector<uint8_t> pending;
  while (!(*child)->exited()) {
    pollfd p[2] = {{(*child)->pidfd(), POLLIN, 0}, {events, POLLIN, 0}};
    if (poll(p, events >= 0 ? 2 : 1, 200) > 0 && (p[1].revents & POLLIN)) {
      if (!read_some(events, pending, false))
        events = -1;
      printer.print_ring_records(pending);
    }
  }
  drain_now(events, pending);
  printer.print_ring_records(pending);
  std::vector<runtime::MapData> maps(spec.maps.size());
  GpuRunSummary ran = run ? finish_gpu_run(spec, *run, printer, maps, err) : GpuRunSummary{};
  int files = finish_output_files(out, err);
  runtime::print_all_maps(out, spec, maps, nullptr);
  out.flush();
  int status = report_child_exit(g_interrupted ? std::nullopt : (*child)->exit_info(), err);
  int gpu_status = report_gpu_probes_ran(ran.ran, err);
  return first_failure({status, gpu_status, files, report_partially_traced(ran, err)});
}

} // namespace gpubt::driver
