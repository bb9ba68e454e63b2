// The values are the ones the run uses: BPFTRACE_MAP_KEYS_MAX over the script's max_map_keys
// (as driver/compile.cpp lays the maps out), print_maps_on_exit from the script.
#include "driver/config_fields.h"

#include <cstdlib>

namespace gpubt::driver {

std::vector<frontend::ConfigField> config_fields(const Options &options,
                                                 const frontend::ScriptConfig &script) {
  using Kind = frontend::ConfigField::Kind;
  const BpftraceEnv &env = options.env;
  uint64_t map_keys = env.map_keys_max;
  if (script.max_map_keys && !std::getenv("BPFTRACE_MAP_KEYS_MAX"))
    map_keys = *script.max_map_keys;
  auto flag = [](const char *name, bool v) { return frontend::ConfigField{name, Kind::Bool, v, ""}; };
  auto number = [](const char *name, uint64_t v) {
    return frontend::ConfigField{name, Kind::Int, v, ""};
  };
  return {flag("cpp_demangle", env.demangle_cpp),
          flag("print_maps_on_exit", script.print_maps_on_exit.value_or(true)),
          number("log_size", env.log_size),
          number("max_bpf_progs", env.max_bpf_progs),
          number("max_cat_bytes", env.cat_bytes_max),
          number("max_map_keys", map_keys),
          number("max_probes", env.max_probes),
          number("max_strlen", env.strlen),
          number("perf_rb_pages", env.perf_rb_pages),
          // gpubt prints stacks one way, bpftrace's default
          {"stack_mode", Kind::String, 0, "bpftrace"}};
}

} // namespace gpubt::driver
