// frontend::Type -> abi::ValueType and abi::AggKind: how the runtime prints a map's keys and
// values and a printf's arguments. Shared by the map layouts and both lowerings' formats.
#pragma once
#include "frontend/types.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::codegen::layout {

abi::ValueType to_value_type(const frontend::Type &t);
abi::AggKind to_agg_kind(frontend::TypeKind k);

} // namespace gpubt::codegen::layout
