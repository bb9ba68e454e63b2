// Which keyed maps the gpu probes update only under keys that are the same for every thread of a
// launch (`@[kernel] = count()`): every warp of a launch would update one slot, so such a map
// spreads each key over a few slots by SM (device_map_layout.h, key_spread).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"

namespace gpubt::codegen::layout {

// Whether every mention of map NAME in a gpu probe has a key made only of values that are the
// same for every thread of a launch: literals, kernel, pid, comm, probe, uid, gid, the grid's and
// block's sizes, and operators over them.
bool keys_launch_uniform(const frontend::Program &program, const std::string &name);

// Whether E is the same for every thread of a launch, by the rule above.
bool launch_uniform(const frontend::Expr &e);

// For an update's slot cache (codegen/device/slot_cache.cpp): the builtins M's key reads that
// may differ between launches of one kernel (bdim_*, gdim_*), one use of each; a kernel's ctx
// fixes the rest (kernel, pid, constants; `probe` is fixed per probe function). nullopt when
// the key is not launch-uniform.
std::optional<std::vector<const frontend::BuiltinExpr *>>
launch_values_in_key(const frontend::MapExpr &m);

} // namespace gpubt::codegen::layout
