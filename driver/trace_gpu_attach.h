// gpu probes without -c: attached to the agents of CUDA processes already running (-p PID: that
// one; else every one, and those that start while gpubt runs), detached at the end.
#pragma once
#include <map>
#include <memory>
#include <ostream>
#include <vector>

#include "driver/exit_report.h"
#include "driver/options.h"
#include "runtime/abi/program_spec.h"
#include "runtime/gpu/gpu_attach.h"
#include "runtime/output/event_printer.h"
#include "runtime/process/exit_watch.h"

namespace gpubt::driver {

// Attaches; nullptr (and the error on ERR) when -p's process cannot be attached to.
// HOST_MAP_FDS: spec map index -> gpubt's fd of each map host and gpu probes share.
std::unique_ptr<runtime::GpuAttach> attach_gpu_probes(const abi::ProgramSpec &spec,
                                                      const Options &options,
                                                      const std::map<int, int> &host_map_fds,
                                                      std::ostream &err);

// Detaches, prints what the processes' agents said and their printf records, and adds their maps
// to MAPS. Returns whether any gpu probe ran and what ran untraced.
GpuRunSummary detach_gpu_probes(const abi::ProgramSpec &spec, runtime::GpuAttach &gpu,
                                runtime::EventPrinter &printer,
                                std::vector<runtime::MapData> &maps, std::ostream &err);

// A script of gpu probes only, attached until Ctrl-C, SIGTERM or (-p) the process's end, which
// TARGET_EXIT (-p; else nullptr) words as -c's end is worded.
int trace_gpu_attached(const abi::ProgramSpec &spec, const Options &options,
                       runtime::ProcessExitWatch *target_exit, runtime::Output &out,
                       std::ostream &err);

} // namespace gpubt::driver
