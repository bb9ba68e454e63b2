// Expressions -> IR values through the lowering core (codegen/common/lowering.h); what only BPF
// lowers is here and in lower_pointer.cpp. Calls and builtins are tables in lower_calls.cpp and
// lower_builtins.cpp.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

inline Val lower_expr(LowerCtx &c, const frontend::Expr &e) { return c.lower_expr(e); }
inline llvm::Value *truthy(LowerCtx &c, Val v) { return c.truthy(v); } // i1

// bpftrace's string ==: the first `limit` bytes, up to the shorter size or the first NUL (i1).
llvm::Value *strings_equal(LowerCtx &c, Val a, uint32_t na, Val b, uint32_t nb,
                           uint32_t limit = UINT32_MAX);

// lower_builtins.cpp
Val lower_builtin(LowerCtx &c, const frontend::BuiltinExpr &e);
Val lower_tracepoint_arg(LowerCtx &c, const frontend::FieldExpr &e);
// argN of a function probe (a usdt site's where c.usdt is set), an i64.
llvm::Value *lower_arg(LowerCtx &c, int n);

// lower_calls.cpp. TARGET is the map of `@m[k] = f(...)` for aggregations, else null.
bool is_aggregation(const frontend::CallExpr &call);
Val lower_call(LowerCtx &c, const frontend::CallExpr &call, const frontend::MapExpr *target);

} // namespace gpubt::codegen::bpf
