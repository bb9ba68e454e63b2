// tracefs access: finding (or mounting) it, tracepoint ids, and the list of tracepoints.
#pragma once
#include "runtime/abi/result.h"
#include <string>
#include <utility>
#include <vector>

namespace gpubt::runtime {

// The tracefs directory that has events/: /sys/kernel/tracing (mounted here if needed) or
// /sys/kernel/debug/tracing. The error tells the user the mount command to run.
Result<std::string> tracefs_root();

// The perf event id of tracepoint CATEGORY:NAME (events/CAT/NAME/id).
Result<int> tracepoint_id(const std::string &category, const std::string &name);

struct Tracepoint {
  std::string category, name;
};

// The declarations of CATEGORY:NAME's own fields ("char * buf", "__data_loc char[] filename"),
// as events/CAT/NAME/format spells them, without the common_ fields every record starts with.
Result<std::vector<std::string>> tracepoint_field_declarations(const std::string &category,
                                                               const std::string &name);

// All tracepoints (from available_events), sorted.
Result<std::vector<Tracepoint>> list_tracepoints();

// Tracepoints whose category and name match the (wildcard) patterns; empty when none do.
Result<std::vector<Tracepoint>> match_tracepoints(const std::string &category_pattern,
                                                  const std::string &name_pattern);

} // namespace gpubt::runtime
