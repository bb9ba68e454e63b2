// -k / -kk: a BPF helper's failure sent to user space (abi::EventKind::HelperError) with the
// script position of the expression being lowered, as bpftrace's runtime error checks do.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// -k (level 1) checks probe reads and map deletes; -kk (level 2) map lookups too.
enum class HelperCheck { Level1 = 1, Level2 = 2 };

// When checks of LEVEL are on and RET (an i64 helper result) is negative: the event, named
// HELPER ("probe_read", "map_delete_elem").
void check_helper_result(LowerCtx &c, HelperCheck level, const char *helper, llvm::Value *ret);

// The same for a map lookup's NULL result (bpftrace reports it with return code 0).
void check_lookup_result(LowerCtx &c, const char *helper, llvm::Value *ptr);

} // namespace gpubt::codegen::bpf
