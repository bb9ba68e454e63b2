// The gpu half of a trace run (see trace_gpu.h).
#include "driver/trace_gpu.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>

#include "driver/exit_codes.h"
#include "driver/exit_report.h"
#include "runtime/abi/device_abi.h"
#include "runtime/process/child_process.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/output/format_printf.h"
#include "runtime/output/output_events.h"
#include "runtime/output/print_map.h"

namespace gpubt::driver {
namespace {

// Device values carry no host addresses to symbolize.
std::string no_symbol(uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
  return buf;
}

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

void print_gpu_records(const abi::ProgramSpec &spec, std::vector<uint8_t> &bytes,
                       runtime::OutputFormat format, std::ostream &out) {
  constexpr size_t head = sizeof(gpubt_ring_record) + sizeof(abi::EventHeader);
  size_t pos = 0;
  while (pos + head <= bytes.size()) {
    gpubt_ring_record r;
    abi::EventHeader h;
    std::memcpy(&r, bytes.data() + pos, sizeof r);
    std::memcpy(&h, bytes.data() + pos + sizeof r, sizeof h);
    if (r.size < head || pos + r.size > bytes.size())
      break;
    const uint8_t *payload = bytes.data() + pos + head;
    if (h.kind == uint32_t(abi::EventKind::Printf) && h.index < spec.formats.size())
      runtime::print_printf(
          out,
          runtime::format_printf(spec.formats[h.index], payload, r.size - head, spec, no_symbol),
          format);
    pos += r.size;
  }
  bytes.erase(bytes.begin(), bytes.begin() + pos);
  out.flush();
}

GpuEventThread::GpuEventThread(runtime::GpuRun &run) : fd_(run.events.get()) {
  if (fd_ < 0)
    return;
  thread_ = std::thread([this] {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0 && !read_some(fd_, bytes_, false))
        return;
    }
  });
}

GpuEventThread::~GpuEventThread() { stop(); }

std::vector<uint8_t> GpuEventThread::stop() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  drain_now(fd_, bytes_);
  return std::move(bytes_);
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

bool finish_gpu_run(const abi::ProgramSpec &spec, const runtime::GpuRun &run,
                    const Options &options, std::vector<runtime::MapData> &maps, std::ostream &out,
                    std::ostream &err) {
  auto outcome = runtime::collect_gpu_results(spec, run);
  if (!outcome) {
    err << "WARNING: " << outcome.error() << "\n";
    return false;
  }
  print_gpu_records(spec, outcome->ring_records, options.format, out);
  if (outcome->ring_drops)
    runtime::print_lost_events(out, outcome->ring_drops, options.format);
  for (const auto &w : outcome->warnings)
    err << "WARNING: " << w << "\n";
  runtime::merge_device_maps(spec, outcome->maps, maps);
  return outcome->launches > 0;
}

int trace_gpu_only(const abi::ProgramSpec &spec, const Options &options, runtime::GpuRun *run,
                   std::ostream &out, std::ostream &err) {
  auto child = runtime::ChildProcess::spawn(options.child_command);
  if (!child) {
    err << "ERROR: " << child.error() << "\n";
    return ExitTraceFailed;
  }
  if (run)
    run->close_child_end();
  if (!options.bt.quiet)
    runtime::print_attached_probes(out, run ? spec.device.probes.size() : 0, options.format);
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
  std::vector<uint8_t> pending;
  while (!(*child)->exited()) {
    pollfd p[2] = {{(*child)->pidfd(), POLLIN, 0}, {events, POLLIN, 0}};
    if (poll(p, events >= 0 ? 2 : 1, 200) > 0 && (p[1].revents & POLLIN)) {
      if (!read_some(events, pending, false))
        events = -1;
      print_gpu_records(spec, pending, options.format, out);
    }
  }
  drain_now(events, pending);
  print_gpu_records(spec, pending, options.format, out);
  std::vector<runtime::MapData> maps(spec.maps.size());
  bool ran = run && finish_gpu_run(spec, *run, options, maps, out, err);
  runtime::print_all_maps(out, spec, maps, options.format, no_symbol);
  out.flush();
  int status = report_child_exit(g_interrupted ? std::nullopt : (*child)->exit_info(), err);
  int gpu_status = report_gpu_probes_ran(ran, err);
  return status != ExitOk ? status : gpu_status;
}

} // namespace gpubt::driver
