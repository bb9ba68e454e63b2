// The layout of the values a printf (or print() of values) sends: each argument's printed type
// at an 8-aligned offset, the same for host events and gpu ring records.
#pragma once
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::codegen::layout {

// FORMAT with ARGS laid out; *PAYLOAD_SIZE receives the bytes they take.
abi::FormatSpec value_format(std::string format, const std::vector<const frontend::Expr *> &args,
                             uint32_t *payload_size);

} // namespace gpubt::codegen::layout
