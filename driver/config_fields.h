// config() / __builtin_config (bpftrace head): the options this run has, from the environment
// and the script's `config = { ... }`, as the record's fields.
#pragma once
#include <vector>

#include "driver/options.h"
#include "frontend/passes/check_declarations.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::driver {

// The options gpubt acts on, in bpftrace head's order and with its names.
std::vector<frontend::ConfigField> config_fields(const Options &options,
                                                 const frontend::ScriptConfig &script);

} // namespace gpubt::driver
