// -l [PATTERN]: the probes gpubt could attach, one per line, as `bpftrace -l` prints them.
#pragma once
#include "runtime/abi/result.h"
#include <ostream>
#include <string>

namespace gpubt::runtime {

// No pattern: every tracepoint. "tracepoint:CAT:NAME" (wildcards): matching tracepoints.
// "uprobe:PATH:FUNC" (wildcards; PATH may be a library name): the functions of PATH.
// Any other pattern is matched against the full "tracepoint:cat:name" lines.
// VERBOSE (-lv): a uprobe's function arguments from the binary's DWARF under its line.
Status list_probes(const std::string &pattern, std::ostream &out, int pid = -1,
                   bool verbose = false);

} // namespace gpubt::runtime
