// What the type checker's messages are made of: the names bpftrace gives types and operators,
// when two types may share a map key or value, literal values, and the spans of operators the
// AST keeps no place for.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/types.h"

namespace gpubt::frontend::check {

std::string_view op_text(BinaryOp op);
std::string_view op_text(UnaryOp op);
// bpftrace's short type names ("integer", "string", "tuple", "count"), used in "... provided".
std::string kind_name(const Type &t);
// printf reads usym, probe and username through their string forms.
std::string printf_kind_name(const Type &t);
std::optional<int64_t> literal_value(const Expr &e);
// A tracepoint's char[] or __data_loc field (`args->name`): str() takes it as it is.
bool is_tracepoint_string(const Expr &e);
bool is_nonnegative_literal(const Expr &e);
bool same_kind(const Type &a, const Type &b);
// Tuples stored in one map: same shape, strings may differ in size, the rest must be equal.
bool tuples_compatible(const Type &a, const Type &b);
bool key_compatible(const Type &a, const Type &b);
// Map keys as bpftrace lists them: integers are stored as (and named) unsigned int64.
std::string key_name(const Type &t);
SourceSpan prefix(const SourceSpan &s, uint32_t len);
// From the start of `from` to the end of `to`.
SourceSpan up_to(const SourceSpan &from, const SourceSpan &to);
// The operator between two operands; the AST keeps no span for it, so find it from the gap
// (bpftrace points at the operator for some errors and warnings).
SourceSpan between(const SourceSpan &l, const SourceSpan &r, uint32_t len);

} // namespace gpubt::frontend::check
