// Says on stderr, after the maps printed, how the -c program or -p process ended and whether gpu probes ran,
// and what each makes gpubt's exit status (exit_codes.h).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>

#include "runtime/output/output.h"
#include "runtime/process/child_process.h"

namespace gpubt::runtime {

// "gpubt: NAME (pid N) was killed by SIGSEGV", "... exited with status 3", the exec error, or
// "... ended; its exit status is not known (WHY)" (-p without the proc connector).
// Returns ExitChildFailed for those, ExitOk for a clean exit or no child (nothing is written).
int report_child_exit(const std::optional<ChildExit> &child, std::ostream &err);

// What the gpu half of a run came to: whether any gpu probe ran, and how many modules or entry
// points the probes matched ran without them (runtime::GpuOutcome::untraced).
struct GpuRunSummary {
  bool ran = false;
  uint64_t untraced = 0;
};

// gpu probes were asked for: when none RAN, says so and returns ExitGpuProbesDidNotRun.
int report_gpu_probes_ran(bool ran, std::ostream &err);
// When some ran and some matched modules or entry points did not, says so and returns
// ExitPartiallyTraced.
int report_partially_traced(const GpuRunSummary &gpu, std::ostream &err);

// The trace has ended: OUT's files (--timeline) are put in place before the maps print, with
// Ctrl-C, SIGTERM and SIGHUP held off meanwhile (they take effect after). A failure is said
// and returns ExitTraceFailed.
int finish_output_files(Output &out, std::ostream &err);

// The status gpubt exits with: the first of STATUSES that is not ExitOk.
int first_failure(std::initializer_list<int> statuses);

} // namespace gpubt::runtime
