// Functions whose values user space prints in a form of their own: buf(), ntop(), pton(),
// macaddr(); strcontains(), strlen() and join(). Layouts: frontend/types.h (Buffer, Inet, MacAddr).
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

Val lower_buf(LowerCtx &c, const frontend::CallExpr &call);
Val lower_ntop(LowerCtx &c, const frontend::CallExpr &call);
Val lower_pton(LowerCtx &c, const frontend::CallExpr &call);
Val lower_macaddr(LowerCtx &c, const frontend::CallExpr &call);
Val lower_strcontains(LowerCtx &c, const frontend::CallExpr &call);
// strlen(s): the bytes of s before its NUL (at most its size - 1).
Val lower_strlen(LowerCtx &c, const frontend::CallExpr &call);
// join(argv[, delim]): an abi::EventKind::Join event of the array's strings.
void lower_join(LowerCtx &c, const frontend::CallExpr &call);

} // namespace gpubt::codegen::bpf
