// Which syntax-tree operator a grammar token stands for (compound assignments: their binary op).
#pragma once
#include <cstddef>

#include "frontend/ast.h"

namespace gpubt::frontend::parse {

BinaryOp binary_op(size_t token);
UnaryOp unary_op(size_t token);

} // namespace gpubt::frontend::parse
