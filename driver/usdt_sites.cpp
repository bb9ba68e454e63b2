// usdt attach point -> sites, with bpftrace 0.17's errors for a target that names nothing.
#include "driver/usdt_sites.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/usdt_probes.h"
#include <sstream>
#include <unistd.h>

namespace gpubt::driver {

std::string traced_program(const Options &o) {
  std::string program;
  std::istringstream(o.child_command) >> program;
  if (!program.empty())
    if (auto exe = runtime::find_in_path(program))
      return *exe;
  return o.pid > 0 ? "/proc/" + std::to_string(o.pid) + "/exe" : "";
}

decltype(codegen::bpf::BpfCodegenOptions::usdt_sites) make_usdt_site_finder(const Options &o) {
  // -c: probes without a file are the program's (it is not running yet).
  std::string program = o.child_command.empty() ? "" : traced_program(o);
  int pid = o.pid;
  return [program, pid](const frontend::AttachPoint &ap)
             -> Result<std::vector<abi::UsdtSite>> {
    std::string target = ap.target;
    if (target.empty() && pid <= 0)
      target = program;
    if (target.empty() && pid <= 0)
      return make_error("usdt probe must specify at least path or pid to probe");
    if (!target.empty() && target.find_first_of("*?[/") != std::string::npos &&
        target.find_first_of("*?[") == std::string::npos && access(target.c_str(), F_OK) != 0)
      return make_error("usdt target file '" + target + "' does not exist or is not executable");
    auto sites = runtime::find_usdt_sites(target, ap.ns, ap.func, pid);
    if (!sites)
      return make_error(ap.name() + ": " + sites.error());
    if (sites->empty())
      return make_error("No probes to attach: nothing matches " + ap.name());
    return sites;
  };
}

} // namespace gpubt::driver
