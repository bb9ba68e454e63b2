// -l [PATTERN]: the probes gpubt could attach, one per line, as `bpftrace -l` prints them.
#pragma once
#include "runtime/abi/result.h"
#include <ostream>
#include <string>

namespace gpubt::runtime {

// No pattern: every tracepoint, software and hardware event; with PID > 0, the process's
// functions and USDT probes instead. "TYPE:REST" lists TYPE's probes (tracepoint, uprobe,
// uretprobe, usdt, software, hardware, or their short names; a wildcard TYPE lists each type it
// matches): "uprobe:PATH:FUNC" (PATH a library name, a wildcard, or with -p "*": the process's
// files), "usdt:PATH[:PROVIDER]:NAME". A pattern without a type is matched against the full
// "tracepoint:cat:name" lines; "host:" before TYPE is dropped, as in scripts. A TYPE that is not
// one of these, and characters no probe has, are errors, as in bpftrace.
// VERBOSE (-lv): a uprobe's function arguments from the binary's DWARF under its line, a
// tracepoint's fields under it.
Status list_probes(const std::string &pattern, std::ostream &out, int pid = -1,
                   bool verbose = false);

} // namespace gpubt::runtime
