// Ring-buffer events from BPF: the header, a payload filled in place, the lost-event count when
// the ring is full, and --timeline's EventStamp.
#pragma once
#include <functional>

#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// An event: EventHeader{kind, index} then PAYLOAD bytes written by FILL, sent from scratch.
void send_event(LowerCtx &c, abi::EventKind kind, uint32_t index, uint32_t payload,
                const std::function<void(llvm::Value *payload)> &fill = {});

// abi::EventStamp at DST (8-aligned): now, this thread, this probe.
void store_stamp(LowerCtx &c, llvm::Value *dst);

} // namespace gpubt::codegen::bpf
