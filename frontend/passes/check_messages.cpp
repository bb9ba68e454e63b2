#include "frontend/passes/check_messages.h"
#include "frontend/passes/check_types.h"

namespace gpubt::frontend::check {

std::string_view op_text(BinaryOp op) {
  static constexpr std::string_view kText[] = {"+",  "-",  "*", "/",  "%",  "&",  "|",
                                               "^",  "<<", ">>", "==", "!=", "<",  "<=",
                                               ">",  ">=", "&&", "||"};
  return kText[static_cast<int>(op)];
}

std::string_view op_text(UnaryOp op) {
  static constexpr std::string_view kText[] = {"-", "!", "~", "*", "++", "--", "++", "--"};
  return kText[static_cast<int>(op)];
}

std::string kind_name(const Type &t) {
  switch (t.kind) {
  case TypeKind::Integer:
  case TypeKind::Enum:
  case TypeKind::Pointer: // printf("%lu", p) prints the address
    return "integer";
  case TypeKind::String:
    return "string";
  case TypeKind::Tuple:
    return "tuple";
  case TypeKind::Record:
    return "struct";
  case TypeKind::Array:
    return "array";
  default:
    return to_string(t);
  }
}

std::string printf_kind_name(const Type &t) {
  switch (t.kind) {
  case TypeKind::UserSym:
  case TypeKind::Probe:
  case TypeKind::KernelName:
  case TypeKind::UStack:
  case TypeKind::KStack:
  case TypeKind::PyStack:
  case TypeKind::UstackPy:
  case TypeKind::Timestamp:
  case TypeKind::Inet:
  case TypeKind::MacAddr:
  case TypeKind::Errno:
  case TypeKind::SignalName:
  case TypeKind::Username:
  case TypeKind::CgroupPath:
    return "string";
  case TypeKind::Buffer:
    return "buffer";
  default:
    break;
  }
  return kind_name(t);
}

std::optional<int64_t> literal_value(const Expr &e) {
  if (e.kind == ExprKind::Integer)
    return e.as<IntegerExpr>().value;
  if (e.kind == ExprKind::Unary && e.as<UnaryExpr>().op == UnaryOp::Neg &&
      e.as<UnaryExpr>().operand->kind == ExprKind::Integer)
    return -e.as<UnaryExpr>().operand->as<IntegerExpr>().value;
  return std::nullopt;
}

bool is_tracepoint_string(const Expr &e) {
  return e.type.kind == TypeKind::String && e.kind == ExprKind::Field &&
         is_builtin(*e.as<FieldExpr>().base, BuiltinId::Args);
}

bool is_nonnegative_literal(const Expr &e) {
  auto v = literal_value(e);
  return v && *v >= 0;
}

bool same_kind(const Type &a, const Type &b) {
  if (a.is_integer_like() && b.is_integer_like())
    return a.kind == b.kind || (a.kind == TypeKind::Integer && b.kind == TypeKind::Integer);
  return a.kind == b.kind;
}

bool tuples_compatible(const Type &a, const Type &b) {
  if (a.elems.size() != b.elems.size() || a.is_named_tuple() != b.is_named_tuple())
    return false;
  for (size_t i = 0; i < a.elems.size(); ++i) {
    int j = source_field(a, b, i); // records: the field of the same name, in any order
    if (j < 0)
      return false;
    const Type &x = a.elems[i], &y = b.elems[j];
    if (x.kind == TypeKind::String && y.kind == TypeKind::String)
      continue;
    if (x.kind == TypeKind::Tuple && y.kind == TypeKind::Tuple) {
      if (!tuples_compatible(x, y))
        return false;
      continue;
    }
    if (x != y)
      return false;
  }
  return true;
}

bool key_compatible(const Type &a, const Type &b) {
  if (a.is_integer_like() && b.is_integer_like())
    return true;
  if (a.kind == TypeKind::String && b.kind == TypeKind::String)
    return true;
  if (a.kind == TypeKind::Tuple && b.kind == TypeKind::Tuple) { // records: fields by name
    if (a.elems.size() != b.elems.size() || a.is_named_tuple() != b.is_named_tuple())
      return false;
    for (size_t i = 0; i < a.elems.size(); ++i) {
      int j = source_field(a, b, i);
      if (j < 0 || !key_compatible(a.elems[i], b.elems[j]))
        return false;
    }
    return true;
  }
  return a == b;
}

std::string key_name(const Type &t) {
  return t.is_integer_like() ? "unsigned int64" : type_name_in_messages(t);
}

SourceSpan prefix(const SourceSpan &s, uint32_t len) {
  SourceSpan r = s;
  r.end_line = s.line;
  r.end_col = s.col + len;
  return r;
}

SourceSpan up_to(const SourceSpan &from, const SourceSpan &to) {
  SourceSpan s = from;
  s.end_line = to.end_line;
  s.end_col = to.end_col;
  return s;
}

SourceSpan between(const SourceSpan &l, const SourceSpan &r, uint32_t len) {
  SourceSpan s = l;
  s.line = s.end_line = l.end_line;
  s.col = (r.line == l.end_line && r.col >= l.end_col + len + 2) ? l.end_col + 1 : l.end_col;
  s.end_col = s.col + len;
  return s;
}

} // namespace gpubt::frontend::check
