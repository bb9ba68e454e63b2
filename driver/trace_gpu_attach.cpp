// gpu probes attached to running processes (see trace_gpu_attach.h).
#include "driver/trace_gpu_attach.h"

#include <csignal>
#include <poll.h>

#include "driver/exit_codes.h"
#include "driver/exit_report.h"
#include "driver/trace_gpu.h"
#include "runtime/abi/agent_protocol.h"
#include "runtime/output/print_map.h"
#include "runtime/process/child_process.h"

namespace gpubt::driver {
namespace {

volatile sig_atomic_t g_stop = 0;
void note_stop(int) { g_stop = 1; }

} // namespace

std::unique_ptr<runtime::GpuAttach> attach_gpu_probes(const abi::ProgramSpec &spec,
                                                      const Options &options,
                                                      const std::map<int, int> &host_map_fds,
                                                      std::ostream &err) {
  runtime::GpuAttach::Options o;
  o.backend = options.gpu_backend;
  o.verbose = options.verbose;
  o.pid = options.pid > 0 ? pid_t(options.pid) : 0;
  o.host_map_fds = host_map_fds;
  auto gpu = runtime::GpuAttach::start(spec, o, err);
  if (!gpu) {
    err << "ERROR: " << gpu.error() << "\n";
    return nullptr;
  }
  return std::move(*gpu);
}

GpuRunSummary detach_gpu_probes(const abi::ProgramSpec &spec, runtime::GpuAttach &gpu,
                                runtime::EventPrinter &printer,
                                std::vector<runtime::MapData> &maps, std::ostream &err) {
  abi::AgentResults results = gpu.finish(err);
  auto late = gpu.take_events(); // sent while detaching
  printer.print_ring_records(late);
  for (const auto &m : results.messages)
    err << "gpubt: " << m << "\n";
  runtime::GpuOutcome outcome = runtime::gpu_outcome(spec, results);
  return apply_gpu_outcome(spec, outcome, printer, maps, err);
}

int trace_gpu_attached(const abi::ProgramSpec &spec, const Options &options,
                       runtime::ProcessExitWatch *target_exit, runtime::Output &out,
                       std::ostream &err) {
  runtime::UniqueFd target;
  if (options.pid > 0) {
    auto fd = runtime::open_pidfd(options.pid);
    if (!fd) {
      err << "ERROR: " << fd.error() << "\n";
      return ExitUserError;
    }
    target = std::move(*fd);
  }
  std::signal(SIGINT, note_stop);
  std::signal(SIGTERM, note_stop);
  auto gpu = attach_gpu_probes(spec, options, {}, err);
  if (!gpu)
    return ExitUserError;
  if (!options.bt.quiet)
    out.attached_probes(spec.device.probes.size());
  out.flush();
  if (std::getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED"))
    err << "__BPFTRACE_NOTIFY_PROBES_ATTACHED" << std::endl;
  runtime::EventPrinter printer(spec, out, nullptr); // device values carry no host addresses
  std::vector<uint8_t> pending;
  bool ended = false;
  while (!g_stop && !ended) {
    pollfd p{target.get(), POLLIN, 0};
    ended = poll(&p, target.valid() ? 1 : 0, 200) > 0;
    auto events = gpu->take_events();
    pending.insert(pending.end(), events.begin(), events.end());
    printer.print_ring_records(pending);
    out.flush();
  }
  std::vector<runtime::MapData> maps(spec.maps.size());
  pending.clear();
  GpuRunSummary ran = detach_gpu_probes(spec, *gpu, printer, maps, err);
  int files = finish_output_files(out, err);
  runtime::print_all_maps(out, spec, maps, nullptr);
  out.flush();
  int child = report_child_exit(
      ended && target_exit ? std::optional(target_exit->ended()) : std::nullopt, err);
  int gpu_status = report_gpu_probes_ran(ran.ran, err);
  return first_failure({child, gpu_status, files, report_partially_traced(ran, err)});
}

} // namespace gpubt::driver
