// How the -c program ended and whether gpu probes ran, in words (see exit_report.h).
#include "runtime/run/exit_report.h"

#include <csignal>
#include <cstring>
#include <string>

#include "runtime/run/exit_codes.h"
#include "runtime/output/escape.h"

namespace gpubt::runtime {
namespace {

std::string signal_name(int sig) {
  if (const char *abbrev = sigabbrev_np(sig))
    return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

} // namespace

int report_child_exit(const std::optional<ChildExit> &child, std::ostream &err) {
  if (!child)
    return ExitOk;
  // The name is the process's comm, which it sets itself (and may be another user's).
  std::string who = escape_control(child->name) + " (pid " +
                    std::to_string(child->pid) + ")";
  if (child->exec_errno)
    err << "ERROR: failed to exec '" << child->path << "': " << std::strerror(child->exec_errno)
        << "\n";
  else if (child->signal)
    err << "gpubt: " << who << " was killed by " << signal_name(child->signal) << "\n";
  else if (child->exited && child->status != 0)
    err << "gpubt: " << who << " exited with status " << child->status << "\n";
  else if (!child->unknown_why.empty())
    err << "gpubt: " << who << " ended; its exit status is not known (" << child->unknown_why
        << ")\n";
  else
    return ExitOk;
  err.flush();
  return ExitChildFailed;
}

int report_gpu_probes_ran(bool ran, std::ostream &err) {
  if (ran)
    return ExitOk;
  err << "gpubt: no gpu probe ran (see the warnings above)\n";
  err.flush();
  return ExitGpuProbesDidNotRun;
}

int report_partially_traced(const GpuRunSummary &gpu, std::ostream &err) {
  if (!gpu.ran || !gpu.untraced)
    return ExitOk;
  err << "gpubt: partially traced: " << gpu.untraced
      << " module(s), kernel(s) or entry point(s) the gpu probes matched ran without them "
         "(see the warnings above)\n";
  err.flush();
  return ExitPartiallyTraced;
}

int finish_output_files(Output &out, std::ostream &err) {
  sigset_t stops, old;
  sigemptyset(&stops);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&stops, sig);
  sigprocmask(SIG_BLOCK, &stops, &old);
  auto st = out.finish();
  if (!st)
    err << "ERROR: " << st.error() << "\n";
  err.flush();
  sigprocmask(SIG_SETMASK, &old, nullptr);
  return st ? ExitOk : ExitTraceFailed;
}

int first_failure(std::initializer_list<int> statuses) {
  for (int s : statuses)
    if (s != ExitOk)
      return s;
  return ExitOk;
}

} // namespace gpubt::runtime
