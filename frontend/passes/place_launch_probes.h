// Where each gpu probe runs (issue 25). A gpu:kretprobe whose predicate is `last_thread` (alone,
// or `last_thread && COND`) and which reads only what a launch's record answers (kernel, pid,
// launch_start, nsecs as the launch's end, gdim_*, bdim_*, probe; host-side functions) runs in
// gpubt once per finished launch (Provider::GpuLaunch): no device probe, no exit patch in every
// thread, when it is the run's only gpu probe. Anything else stays on the GPU, with why.
#pragma once
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

struct ProbePlacement {
  std::string probe; // the attach point's name (gpu:kretprobe:PATTERN)
  bool per_launch = false;
  // per_launch, and it reads launch_call: the agent times each launch's call too.
  bool reads_launch_call = false;
  // per_launch false: why it needs the GPU ("reads tid, a value of each thread"), at WHERE.
  std::string why;
  SourceSpan where;
};

// Moves the qualifying probes to Provider::GpuLaunch; returns one placement per gpu probe, in
// order. Runs after the semantic checks (it reads the builtin and function ids and relies on
// check_launch_state: at most one probe with one attach point uses last_thread).
// HELD: why no probe may move in this run ("" when they may): launches are timed only in a
// process started by gpubt (-c), whose gpu probes all move (launch_timer.h says why).
std::vector<ProbePlacement> place_launch_probes(Program &program, const std::string &held = "");

// "gpu:kretprobe:* runs in gpubt once per finished launch (...)" or "... runs on the GPU in
// every thread: stdin:3:5: reads tid, a value of each thread", for -v and --dry-run.
std::string placement_line(const ProbePlacement &p, const std::string &file);

} // namespace gpubt::frontend
