// What the tracer refuses or warns about around attaching: a target that is not there, too
// many probes, functions that matched nothing, maps that were full.
#include "runtime/run/tracer.h"

#include <algorithm>

#include "runtime/run/exit_codes.h"

namespace gpubt::runtime {

// A -c program or -p process that is not there is found before any map or probe is made: a
// -c program that cannot be executed is the program's failure (ExitChildFailed, as when its
// exec fails later), a -p process that is not there an error in the options.
int Tracer::check_target() {
  if (!options_.command.empty()) {
    if (auto path = resolve_command(options_.command); !path) {
      err_ << "ERROR: " << path.error() << "\n";
      return ExitChildFailed;
    }
  } else if (options_.pid > 0) {
    if (auto fd = open_pidfd(options_.pid); !fd) {
      err_ << "ERROR: " << fd.error() << "\n";
      return ExitUserError;
    }
  }
  return ExitOk;
}

// bpftrace's cap: each probe costs an attach (10,000 BEGIN probes took 18 s) and kernel memory.
// Checked on the script's probes, then again once wildcards have matched functions.
bool Tracer::check_probe_count(uint64_t count) {
  if (count <= options_.max_probes)
    return true;
  err_ << "ERROR: Can't attach to " << count << " probes because it exceeds the current limit of "
       << options_.max_probes << " probes.\nYou can increase the limit through the "
       << "BPFTRACE_MAX_PROBES environment variable, but BE CAREFUL since a high number of probes "
          "attached can cause your system to crash.\n";
  return false;
}

// A misspelt function is an error (bpftrace 0.17 silently attaches nothing) when none of the
// script's uprobes found theirs; when others did, it is a warning: tools like sslsnoop.bt probe
// functions of several library versions, of which a system has some. A wildcard that matches
// nothing is only a warning.
bool Tracer::report_unmatched() {
  const auto &unmatched = session_->unmatched();
  bool some_found = false;
  for (const auto &p : spec_.probes)
    if ((p.kind == abi::AttachKind::Uprobe || p.kind == abi::AttachKind::Uretprobe) && !p.hidden &&
        std::find(unmatched.begin(), unmatched.end(), p.name) == unmatched.end())
      some_found = true;
  bool ok = true;
  for (const auto &name : unmatched) {
    for (const auto &p : spec_.probes) {
      if (p.name != name)
        continue;
      if (p.func.find_first_of("*?[") != std::string::npos) {
        err_ << "WARNING: " << name << ": no functions match '" << p.func << "'\n";
      } else {
        std::string hint =
            options_.function_hint ? options_.function_hint(p.target, p.func) : "";
        err_ << (some_found ? "WARNING: " : "ERROR: ") << name << ": no function '" << p.func
             << "' in " << p.target << " (" << (hint.empty() ? "" : hint + "; ")
             << "list them with: gpubt -l 'uprobe:" << p.target << ":*')\n";
        ok = ok && some_found;
      }
      break;
    }
  }
  return ok;
}

// A full map refuses new keys; its printout then misses them, so it is said (bpftrace 0.17 says
// nothing; later versions warn).
void Tracer::report_dropped_keys() {
  std::vector<uint64_t> dropped = session_->dropped_keys();
  for (size_t i = 0; i < dropped.size(); ++i)
    if (dropped[i] && !spec_.maps[i].internal)
      err_ << "WARNING: Map full; can't update element: map " << spec_.maps[i].name
           << " was full (" << spec_.maps[i].max_entries << " keys): " << dropped[i] << " updates with new keys were dropped; raise "
           << "BPFTRACE_MAP_KEYS_MAX to keep them\n";
}

} // namespace gpubt::runtime
