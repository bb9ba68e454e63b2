// Pointers and C records in host probes: `*p`, `p[i]` and `p->x` read the pointee (user memory
// in uprobes, kernel memory elsewhere, as bpftrace chooses); `s.x` and `a[i]` pick a field or
// element of a record or array value. Arithmetic on a pointer (counted in pointee sizes,
// codegen::pointer_step) is the lowering core's.
#pragma once
#include "codegen/bpf/lower_context.h"
#include "frontend/ast.h"

namespace gpubt::codegen::bpf {

// *operand: e.type's bytes at the address; 0 if unreadable.
Val lower_deref(LowerCtx &c, const frontend::UnaryExpr &e);

// base[index]: an element of an array value, or *(base + index) through a pointer.
Val lower_index(LowerCtx &c, const frontend::IndexExpr &e);

// s.x on a record value, p->x through a pointer to a record.
Val lower_record_field(LowerCtx &c, const frontend::FieldExpr &e);

// bpf_probe_read_user in uprobes, bpf_probe_read elsewhere (bpftrace 0.17's choice) and for a
// POINTER that leads back to curtask (kernel memory, in a uprobe too).
int read_helper(const LowerCtx &c, const frontend::Expr *pointer = nullptr);

} // namespace gpubt::codegen::bpf
