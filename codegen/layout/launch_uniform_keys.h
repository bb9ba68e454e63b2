// Which keyed maps the gpu probes update only under keys that are the same for every thread of a
// launch (`@[kernel] = count()`): every warp of a launch would update one slot, so such a map
// spreads each key over a few slots by SM (device_map_layout.h, key_spread).
#pragma once
#include <string>

#include "frontend/ast.h"

namespace gpubt::codegen::layout {

// Whether every mention of map NAME in a gpu probe has a key made only of values that are the
// same for every thread of a launch: literals, kernel, pid, comm, probe, uid, gid, the grid's and
// block's sizes, and operators over them.
bool keys_launch_uniform(const frontend::Program &program, const std::string &name);

} // namespace gpubt::codegen::layout
