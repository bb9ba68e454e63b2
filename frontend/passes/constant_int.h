// An integer expression's value when it is known without running the program: literals and
// the operators over them, as bpftrace folds `(1, "a")[1 - 1]`'s index.
#pragma once
#include <cstdint>
#include <optional>

#include "frontend/ast.h"

namespace gpubt::frontend {

// The value of E, or nullopt when E reads anything at run time (or divides by zero).
std::optional<int64_t> constant_int(const Expr &e);

} // namespace gpubt::frontend
