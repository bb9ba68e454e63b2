// gpubt's exit statuses, one place for all of them (docs/exit-status.md says the same).
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
  // Partially traced: gpu probes ran, but some CUDA modules or Vulkan entry points they matched
  // ran without them (a module that could not be patched, pipelines past the Vulkan layer's
  // entry point limit), so their launches are not in the maps. Any other status wins.
  ExitPartiallyTraced = 5,
};

// --help's EXIT STATUS section (docs/exit-status.md's table in short).
inline constexpr char kExitStatusHelp[] =
    "EXIT STATUS:\n"
    "    0  the trace ran (and the -c program, if any, exited 0)\n"
    "    1  an error in the script or the options, or a probe that would not load or attach\n"
    "    2  gpubt could not start the -c program, or its output could not be written\n"
    "    3  the -c program or the -p process failed (exec error, non-zero exit, a signal)\n"
    "    4  gpu probes were asked for and none ran\n"
    "    5  partially traced: gpu probes ran, but CUDA modules or Vulkan entry points they\n"
    "       matched ran without them (not patched, past the Vulkan layer's limit)\n"
    "    N  the script called exit(N) (wins over 2-5)\n";

} // namespace gpubt::runtime
