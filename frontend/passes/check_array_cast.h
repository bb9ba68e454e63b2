// bpftrace head's casts to arrays, `(int8[8])x`, `(bool[2])x`, `(uint8[])"ab"`: what may be cast.
#pragma once
#include <optional>
#include <string>

#include "frontend/ast.h"
#include "frontend/c_types.h"

namespace gpubt::frontend {

// The error for the resolved cast C to an array (C.to.array_count set), or none if it is fine:
// the elements are integers or bools, and the operand is an integer (zero-extended when the
// array is wider, up to 8 bytes) or a string of the array's size (its bytes reinterpreted).
std::optional<std::string> array_cast_error(const CastExpr &c, const CTypes *c_types);

} // namespace gpubt::frontend
