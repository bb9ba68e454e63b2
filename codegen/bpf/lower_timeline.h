// --timeline in BPF: a function the script probes at both entry and return becomes a span per
// call. Each side's program first sends a Span event (EventStamp, then the catalogued API
// function's arguments at entry or its retval at return), whatever its predicate says.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// Whether AP (a uprobe or uretprobe) has its other side in PROGRAM: same target, same function.
bool is_span_edge(const frontend::Program &program, const frontend::AttachPoint &ap);

// Sends this probe's Span event, adding its SpanSpec to the program spec.
void send_span_edge(LowerCtx &c);

} // namespace gpubt::codegen::bpf
