#include "driver/attach_point_lookup.h"

#include <cctype>

#include "frontend/nearest_name.h"
#include "runtime/bpf/tracefs.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/symbols.h"
#include "stdlib/api_catalog.h"

namespace gpubt::driver {
namespace {

using frontend::AttachPoint;
using Status = frontend::AttachPointStatus;

Status check_tracepoint(const AttachPoint &ap) {
  if (runtime::has_wildcard(ap.target) || runtime::has_wildcard(ap.func) ||
      !runtime::tracefs_root())
    return {};
  if (runtime::tracepoint_id(ap.target, ap.func))
    return {};
  std::vector<std::string> names;
  if (auto all = runtime::list_tracepoints())
    for (const auto &tp : *all)
      names.push_back(tp.category + ":" + tp.name);
  std::string name = ap.target + ":" + ap.func;
  std::string hint = frontend::did_you_mean_hint(frontend::nearest_names(name, names, 1));
  // Xid events (tools/xidsnoop.bt) come from NVIDIA's own module, not the kernel's.
  if (hint.empty() && (ap.target == "nvidia" || ap.target == "nvswitch"))
    hint = "NVIDIA's kernel module defines " + ap.target +
           ":* tracepoints, and none is loaded here: see docs/nccl.md, GPU errors";
  return {Status::Missing, "tracepoint not found: " + name, hint};
}

// An address (`:0x401000`, `:4198400`) or an offset into a function (`func+16`).
bool is_address_form(const std::string &func) {
  return func.empty() || std::isdigit(static_cast<unsigned char>(func[0])) ||
         func.find('+') != std::string::npos;
}

// Only a file named by path is checked here: a library alias or bare name may be one the program
// loads later (PyTorch dlopens its own libcudart), which only the attach can see.
Status check_uprobe(const AttachPoint &ap, int pid, bool functions) {
  if (pid > 0 || runtime::has_wildcard(ap.func) || is_address_form(ap.func))
    return {};
  if (ap.target.find('/') == std::string::npos) {
    const auto *fn = stdlib::find_api_function(ap.func);
    if (fn && runtime::gpu_library_prefix(ap.target) && !stdlib::is_library_alias(fn->library, ap.target))
      return {Status::Missing, "no function '" + ap.func + "' in " + ap.target,
              gpu_function_hint(ap.target, ap.func)};
    return {};
  }
  if (runtime::has_wildcard(ap.target))
    return {};
  if (!functions) {
    auto path = runtime::resolve_binary_path(ap.target);
    return path ? Status{} : Status{Status::Missing, path.error(), ""};
  }
  auto targets = runtime::resolve_uprobe_targets(ap.target, ap.func);
  if (!targets)
    return {Status::Missing, targets.error(), ""};
  if (!targets->empty())
    return {};
  return {Status::Missing, "no function '" + ap.func + "' in " + ap.target,
          uprobe_function_hint(ap.target, ap.func, -1)};
}

} // namespace

std::string gpu_function_hint(const std::string &target, const std::string &func) {
  if (const auto *fn = stdlib::find_api_function(func)) {
    auto alias = std::string(stdlib::library_alias(fn->library));
    return stdlib::is_library_alias(fn->library, target)
               ? ""
               : "it is in " + alias + ": uprobe:" + alias + ":" + func;
  }
  std::vector<std::string> names;
  for (const auto &fn : stdlib::api_functions())
    if (stdlib::is_library_alias(fn.library, target))
      names.emplace_back(fn.name);
  return frontend::did_you_mean_hint(frontend::nearest_names(func, names, 1));
}

std::string uprobe_function_hint(const std::string &target, const std::string &func, int pid) {
  if (runtime::gpu_library_prefix(target))
    return gpu_function_hint(target, func);
  std::vector<std::string> names;
  if (auto path = runtime::resolve_binary_path(target, pid))
    if (auto symbols = runtime::cached_elf_functions(*path))
      for (const auto &s : **symbols)
        names.push_back(s.name);
  return frontend::did_you_mean_hint(frontend::nearest_names(func, names, 3));
}

frontend::AttachPointLookup attach_point_lookup(int pid, bool functions) {
  return [pid, functions](const AttachPoint &ap) -> Status {
    switch (ap.provider) {
    case frontend::Provider::Tracepoint:
      return check_tracepoint(ap);
    case frontend::Provider::Uprobe:
    case frontend::Provider::Uretprobe:
      return check_uprobe(ap, pid, functions);
    default:
      return {};
    }
  };
}

} // namespace gpubt::driver
