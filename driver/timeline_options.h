// --timeline FILE, --timeline-events N and --timeline-mb N: a trace-event file written beside the normal output
// (runtime/output/timeline_output.h). Kept apart from options.cpp, as bpftrace_flags.h is.
#pragma once
#include <getopt.h>
#include <optional>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/output/timeline_output.h"

namespace gpubt::driver {

// Long options; their values are >= 1024.
std::vector<option> timeline_long_options();

// Applies option `c` (a getopt result); nullopt if `c` is not one of these options.
std::optional<Status> apply_timeline_option(int c, const char *arg,
                                            runtime::TimelineOptions &options);

extern const char kTimelineUsage[];

} // namespace gpubt::driver
