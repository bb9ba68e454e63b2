// The literal arguments of lhist() and tseries(): their bounds, as bpftrace words what is wrong.
#pragma once
#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace gpubt::frontend {

// Reports what is wrong with C's bounds (an lhist or tseries call; others have none) at the
// call; answers how many errors it reported.
int check_aggregation_args(const CallExpr &c, Diagnostics &diags);

} // namespace gpubt::frontend
