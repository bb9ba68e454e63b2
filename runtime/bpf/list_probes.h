// -l [PATTERN]: the probes gpubt could attach, one per line, as `bpftrace -l` prints them.
#pragma once
#include "runtime/abi/result.h"
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace gpubt::runtime {

// No pattern: every tracepoint, software and hardware event; with PID > 0, the process's
// functions and USDT probes instead. "TYPE:REST" lists TYPE's probes (tracepoint, uprobe,
// uretprobe, usdt, software, hardware, or their short names; a wildcard TYPE lists each type it
// matches): "uprobe:PATH:FUNC" (PATH a library name, a wildcard, or with -p "*": the process's
// files), "usdt:PATH[:PROVIDER]:NAME". A pattern without a type is matched against the full
// "tracepoint:cat:name" lines; "host:" before TYPE is dropped, as in scripts. A TYPE that is not
// one of these, and characters no probe has, are errors, as in bpftrace.
// VERBOSE (-lv): a uprobe's function arguments under its line (from API_ARGS when it has lines
// for the probe, else the binary's DWARF), a tracepoint's fields under it.
// API_ARGS(TYPE, TARGET, FUNC): the lines a source runtime/ does not know lists under
// "TYPE:TARGET:FUNC" (the driver's GPU API catalog: "size_t count"); TARGET as the pattern wrote
// it ("cudart"), else the file.
using ApiArgLines = std::function<std::vector<std::string>(
    const std::string &type, const std::string &target, const std::string &func)>;
// NAME_HINT(NAME, CANDIDATES): " (did you mean 'X'?)" for an unknown probe type, or "" (the
// driver's did-you-mean, frontend/nearest_name.h).
using NameHint = std::function<std::string(const std::string &name,
                                           const std::vector<std::string> &candidates)>;
Status list_probes(const std::string &pattern, std::ostream &out, int pid = -1,
                   bool verbose = false, const ApiArgLines &api_args = {},
                   const NameHint &name_hint = {});

} // namespace gpubt::runtime
