// Attaches a loaded program to every event its probe names (wildcards expanded).
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include "runtime/bpf/progress.h"
#include <string>
#include <vector>

namespace gpubt::runtime {

struct Attached {
  std::vector<UniqueFd> fds;        // perf events or links; closing them detaches
  size_t count = 0;                 // attach points (functions, tracepoints), wildcards expanded
  std::vector<std::string> skipped; // wildcard matches the kernel refused ("func: reason")
};

// What attach cookies index (abi::kFuncCookieTag): the attached functions' names, and the
// expanded probe names, which are appended to the session's ProgramSpec::probe_names.
struct FunctionNames {
  std::vector<std::string> funcs;
  std::vector<std::string> *probe_names = nullptr;
};

// Attaches PROG_FD to everything PROBE names; count 0 when a pattern matched nothing.
// PID > 0 limits uprobes to that process (-p / -c); BEGIN/END always watch only gpubt itself.
// Uprobes use one uprobe_multi link per probe where the kernel has them (see uprobe_multi.h).
// PROGRESS (null: none) hears of each attach point as it attaches.
Result<Attached> attach_probe(const abi::ProbeSpec &probe, int prog_fd, int pid,
                              FunctionNames &names, Progress *progress = nullptr);

} // namespace gpubt::runtime
