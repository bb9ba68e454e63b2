// Where in a kernel a gpu probe's code runs: at each thread's entry or at its exit.
#pragma once

#include "frontend/ast.h"

namespace gpubt::codegen::device {

// True for a gpu:kretprobe whose predicate and body read nothing that can change between a
// thread's entry and its exit (no clock, no launch state, no map read, no printf), and only
// aggregate into maps: it gives the same maps run at the thread's entry. The Compute
// Sanitizer's exit patch costs far more than its entry patch (2.48x vs 1.02x on a PyTorch
// training step where every kernel is SASS-only: bench/gpu/RESULTS.md).
bool same_result_at_entry(const frontend::Probe &probe);

} // namespace gpubt::codegen::device
