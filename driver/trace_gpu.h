// gpu probes in a trace run: the -c child is started with the GPU agent, and after it exits the
// device maps print with the host maps and the device printf records print in order.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "driver/exit_report.h"
#include "driver/options.h"
#include "runtime/abi/program_spec.h"
#include "runtime/gpu/gpu_inject.h"
#include "runtime/output/event_printer.h"

namespace gpubt::driver {

bool has_gpu_probes(const abi::ProgramSpec &spec);

// Before the child is forked: assembles the probes and exports the agent's environment.
// nullptr when that fails (no agent, no ptxas, ...): a warning goes to ERR and the program is
// to run uninstrumented, never refused. Needs -c (checked by the caller).
std::unique_ptr<runtime::GpuRun> start_gpu_run(const abi::ProgramSpec &spec, const Options &options,
                                               std::ostream &err);

// After the child exited: prints the device printf records and lost-event counts through
// PRINTER, writes warnings to ERR, and adds each device map's rows to MAPS (the host maps' rows,
// indexed like spec.maps: runtime::merge_device_maps). Returns whether any gpu probe ran and
// what ran untraced.
GpuRunSummary apply_gpu_outcome(const abi::ProgramSpec &spec, runtime::GpuOutcome &outcome,
                                runtime::EventPrinter &printer,
                                std::vector<runtime::MapData> &maps, std::ostream &err);
GpuRunSummary finish_gpu_run(const abi::ProgramSpec &spec, const runtime::GpuRun &run,
                             runtime::EventPrinter &printer, std::vector<runtime::MapData> &maps,
                             std::ostream &err);

// The agent's event records, read on a thread while a Session runs (so the agent never
// blocks on a full socket); take() returns what came so far, stop() the rest. Nothing happens
// without an events socket.
class GpuEventThread {
public:
  explicit GpuEventThread(runtime::GpuRun &run);
  ~GpuEventThread();
  std::vector<uint8_t> take();
  std::vector<uint8_t> stop();

private:
  int fd_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<uint8_t> bytes_; // under mu_ while the thread runs
  std::thread thread_;
};

// A script whose only probes are gpu probes: no BPF at all, only the child and the agent
// (RUN null: the child runs uninstrumented, the maps print empty). Returns gpubt's exit status.
int trace_gpu_only(const abi::ProgramSpec &spec, const Options &options, runtime::GpuRun *run,
                   runtime::Output &out, std::ostream &err);

} // namespace gpubt::driver
