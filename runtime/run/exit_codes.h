// gpubt's exit statuses, one place for all of them (README.md "Exit status" says the same).
// A wrapper script can tell "my program failed" from "the trace failed" from "no gpu probe ran".
#pragma once

namespace gpubt::runtime {

enum ExitCode : int {
  ExitOk = 0,
  // An error in the script or the options (parse, type and compile errors, a probe naming a
  // function, binary or tracepoint that does not exist, nothing to attach), or a probe the
  // kernel would not load or attach: bpftrace's 1. The session's errors are messages that do not
  // yet tell a missing tracepoint from a refused one, so both stay here.
  ExitUserError = 1,
  // gpubt's own machinery failed once tracing was set up: the -c program could not be forked
  // or started, or the output (-o FILE or stdout) could not be written.
  ExitTraceFailed = 2,
  // The -c program failed: it could not be executed, exited non-zero or was killed by a
  // signal (bpftrace exits 0 then). Wins over ExitGpuProbesDidNotRun: a crash explains that.
  ExitChildFailed = 3,
  // gpu probes were asked for and none ran: no agent or ptxas, the agent wrote no results, or
  // no kernel launch matched any of them.
  ExitGpuProbesDidNotRun = 4,
};

} // namespace gpubt::runtime
