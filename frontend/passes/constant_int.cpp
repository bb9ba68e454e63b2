// Folds integer literals and operators over them (constant_int.h).
#include "frontend/passes/constant_int.h"

namespace gpubt::frontend {
namespace {

std::optional<int64_t> fold(BinaryOp op, int64_t l, int64_t r) {
  uint64_t ul = uint64_t(l), ur = uint64_t(r); // wrapping, as the program's i64 arithmetic
  switch (op) {
  case BinaryOp::Add:
    return int64_t(ul + ur);
  case BinaryOp::Sub:
    return int64_t(ul - ur);
  case BinaryOp::Mul:
    return int64_t(ul * ur);
  case BinaryOp::Div: // literals are signed: signed division, as the program would
  case BinaryOp::Mod:
    if (r == 0 || (l == INT64_MIN && r == -1))
      return std::nullopt;
    return op == BinaryOp::Div ? l / r : l % r;
  case BinaryOp::BitAnd:
    return l & r;
  case BinaryOp::BitOr:
    return l | r;
  case BinaryOp::BitXor:
    return l ^ r;
  case BinaryOp::Shl:
    return int64_t(ul << (ur & 63));
  case BinaryOp::Shr:
    return int64_t(ul >> (ur & 63));
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<int64_t> constant_int(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
    return e.as<IntegerExpr>().value;
  case ExprKind::Unary: {
    const auto &u = e.as<UnaryExpr>();
    auto v = constant_int(*u.operand);
    if (!v)
      return std::nullopt;
    if (u.op == UnaryOp::Neg)
      return int64_t(~uint64_t(*v) + 1);
    if (u.op == UnaryOp::BitNot)
      return ~*v;
    return std::nullopt;
  }
  case ExprKind::Binary: {
    const auto &b = e.as<BinaryExpr>();
    auto l = constant_int(*b.lhs), r = constant_int(*b.rhs);
    return l && r ? fold(b.op, *l, *r) : std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

} // namespace gpubt::frontend
