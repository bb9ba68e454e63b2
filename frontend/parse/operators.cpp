// The grammar's operator tokens as the syntax tree's operators.
#include "frontend/parse/operators.h"

#include "GpubtParser.h"

namespace gpubt::frontend::parse {
namespace {

using P = gpubt_parse::GpubtParser;

const struct {
  size_t token;
  BinaryOp op;
} kBinaryOps[] = {
    {P::PLUS, BinaryOp::Add},
    {P::MINUS, BinaryOp::Sub},
    {P::MUL, BinaryOp::Mul},
    {P::DIV, BinaryOp::Div},
    {P::MOD, BinaryOp::Mod},
    {P::BAND, BinaryOp::BitAnd},
    {P::BOR, BinaryOp::BitOr},
    {P::BXOR, BinaryOp::BitXor},
    {P::LEFT, BinaryOp::Shl},
    {P::RIGHT, BinaryOp::Shr},
    {P::EQ, BinaryOp::Eq},
    {P::NE, BinaryOp::Ne},
    {P::LT, BinaryOp::Lt},
    {P::LE, BinaryOp::Le},
    {P::GT, BinaryOp::Gt},
    {P::GE, BinaryOp::Ge},
    {P::LAND, BinaryOp::LogicalAnd},
    {P::LOR, BinaryOp::LogicalOr},
    // compound assignment operators
    {P::PLUSASSIGN, BinaryOp::Add},
    {P::MINUSASSIGN, BinaryOp::Sub},
    {P::MULASSIGN, BinaryOp::Mul},
    {P::DIVASSIGN, BinaryOp::Div},
    {P::MODASSIGN, BinaryOp::Mod},
    {P::BANDASSIGN, BinaryOp::BitAnd},
    {P::BORASSIGN, BinaryOp::BitOr},
    {P::BXORASSIGN, BinaryOp::BitXor},
    {P::LEFTASSIGN, BinaryOp::Shl},
    {P::RIGHTASSIGN, BinaryOp::Shr},
};

const struct {
  size_t token;
  UnaryOp op;
} kUnaryOps[] = {{P::MINUS, UnaryOp::Neg},
                 {P::LNOT, UnaryOp::Not},
                 {P::BNOT, UnaryOp::BitNot},
                 {P::MUL, UnaryOp::Deref}};

} // namespace

BinaryOp binary_op(size_t token) {
  for (auto r : kBinaryOps)
    if (r.token == token)
      return r.op;
  return BinaryOp::Add; // unreachable: the grammar only produces the tokens above
}

UnaryOp unary_op(size_t token) {
  for (auto r : kUnaryOps)
    if (r.token == token)
      return r.op;
  return UnaryOp::Neg; // unreachable: the grammar only produces the tokens above
}

} // namespace gpubt::frontend::parse
