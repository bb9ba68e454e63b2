// Expressions -> IR values. Calls and builtins are tables in lower_calls.cpp and
// lower_builtins.cpp; statements in lower_stmt.cpp.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

Val lower_expr(LowerCtx &c, const frontend::Expr &e);

// Integer binary operator with bpftrace's semantics (unsigned / and %, x / 0 == 0), the
// result cut to RESULT's width.
llvm::Value *int_binop(LowerCtx &c, frontend::BinaryOp op, llvm::Value *l, llvm::Value *r,
                       bool is_signed, const frontend::Type &result);

llvm::Value *truthy(LowerCtx &c, Val v); // i1

// bpftrace's string ==: the first `limit` bytes, up to the shorter size or the first NUL (i1).
llvm::Value *strings_equal(LowerCtx &c, Val a, uint32_t na, Val b, uint32_t nb,
                           uint32_t limit = UINT32_MAX);

// $variables: integers live in stack slots, strings and tuples in scratch slots.
LowerCtx::Var &variable(LowerCtx &c, const std::string &name, const frontend::Type &type);
void assign_variable(LowerCtx &c, const std::string &name, Val v, const frontend::Type &type);

// lower_builtins.cpp
Val lower_builtin(LowerCtx &c, const frontend::BuiltinExpr &e);
Val lower_tracepoint_arg(LowerCtx &c, const frontend::FieldExpr &e);
// argN of a function probe (a usdt site's where c.usdt is set), an i64.
llvm::Value *lower_arg(LowerCtx &c, int n);

// lower_calls.cpp. TARGET is the map of `@m[k] = f(...)` for aggregations, else null.
bool is_aggregation(const frontend::CallExpr &call);
Val lower_call(LowerCtx &c, const frontend::CallExpr &call, const frontend::MapExpr *target);

} // namespace gpubt::codegen::bpf
