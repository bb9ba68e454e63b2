// Integer operations shared by the lowerings (see int_ops.h).
#include "codegen/int_ops.h"

#include <llvm/IR/Intrinsics.h>

namespace gpubt::codegen {

using frontend::BinaryOp;
using frontend::Type;

llvm::Value *normalize_int(llvm::IRBuilder<> &b, llvm::Value *v, const Type &t) {
  if (v->getType() != b.getInt64Ty())
    v = b.CreateZExtOrTrunc(v, b.getInt64Ty());
  if (!t.is_integer_like() || t.size == 0 || t.size >= 8)
    return v;
  auto *n = b.CreateTrunc(v, b.getIntNTy(t.size * 8));
  return t.is_signed ? b.CreateSExt(n, b.getInt64Ty()) : b.CreateZExt(n, b.getInt64Ty());
}

llvm::Value *int_binop(llvm::IRBuilder<> &b, BinaryOp op, llvm::Value *l, llvm::Value *r,
                       bool is_signed, const Type &result) {
  auto bool64 = [&](llvm::Value *i1) { return b.CreateZExt(i1, b.getInt64Ty()); };
  llvm::Value *v = nullptr;
  auto *zero = b.getInt64(0);
  switch (op) {
  case BinaryOp::Add:
    v = b.CreateAdd(l, r);
    break;
  case BinaryOp::Sub:
    v = b.CreateSub(l, r);
    break;
  case BinaryOp::Mul:
    v = b.CreateMul(l, r);
    break;
  // bpftrace divides unsigned (BPF v3 has no signed division) and the kernel answers 0 for
  // x / 0 and x for x % 0; a safe divisor keeps LLVM from folding a literal 0 to poison.
  case BinaryOp::Div:
  case BinaryOp::Mod: {
    auto *is_zero = b.CreateICmpEQ(r, zero);
    auto *safe = b.CreateSelect(is_zero, b.getInt64(1), r);
    v = op == BinaryOp::Div ? b.CreateSelect(is_zero, zero, b.CreateUDiv(l, safe))
                            : b.CreateSelect(is_zero, l, b.CreateURem(l, safe));
    break;
  }
  case BinaryOp::BitAnd:
    v = b.CreateAnd(l, r);
    break;
  case BinaryOp::BitOr:
    v = b.CreateOr(l, r);
    break;
  case BinaryOp::BitXor:
    v = b.CreateXor(l, r);
    break;
  // Shifts past 63 are poison in LLVM; mask like the BPF instruction does.
  case BinaryOp::Shl:
    v = b.CreateShl(l, b.CreateAnd(r, 63));
    break;
  case BinaryOp::Shr:
    v = b.CreateLShr(l, b.CreateAnd(r, 63));
    break;
  case BinaryOp::Eq:
    v = bool64(b.CreateICmpEQ(l, r));
    break;
  case BinaryOp::Ne:
    v = bool64(b.CreateICmpNE(l, r));
    break;
  case BinaryOp::Lt:
    v = bool64(is_signed ? b.CreateICmpSLT(l, r) : b.CreateICmpULT(l, r));
    break;
  case BinaryOp::Le:
    v = bool64(is_signed ? b.CreateICmpSLE(l, r) : b.CreateICmpULE(l, r));
    break;
  case BinaryOp::Gt:
    v = bool64(is_signed ? b.CreateICmpSGT(l, r) : b.CreateICmpUGT(l, r));
    break;
  case BinaryOp::Ge:
    v = bool64(is_signed ? b.CreateICmpSGE(l, r) : b.CreateICmpUGE(l, r));
    break;
  case BinaryOp::LogicalAnd:
    v = bool64(b.CreateAnd(b.CreateICmpNE(l, zero), b.CreateICmpNE(r, zero)));
    break;
  case BinaryOp::LogicalOr:
    v = bool64(b.CreateOr(b.CreateICmpNE(l, zero), b.CreateICmpNE(r, zero)));
    break;
  }
  return normalize_int(b, v, result);
}

// bpftrace's log2 buckets: 0 for v < 0, 1 for 0, k >= 2 for 2^(k-2) <= v < 2^(k-1).
llvm::Value *popcount_int(llvm::IRBuilder<> &b, llvm::Value *v, const frontend::Type &t) {
  uint32_t bits = t.size >= 1 && t.size < 8 ? t.size * 8 : 64;
  auto *narrow = b.CreateTrunc(v, b.getIntNTy(bits));
  auto *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, narrow);
  return b.CreateZExt(n, b.getInt64Ty());
}

llvm::Value *hist_bucket(llvm::IRBuilder<> &b, llvm::Value *v) {
  llvm::Value *x = v, *n = b.getInt64(0);
  for (int s : {32, 16, 8, 4, 2, 1}) {
    auto *ge = b.CreateICmpUGE(x, b.getInt64(uint64_t(1) << s));
    x = b.CreateSelect(ge, b.CreateLShr(x, s), x);
    n = b.CreateSelect(ge, b.CreateAdd(n, b.getInt64(s)), n);
  }
  llvm::Value *idx = b.CreateAdd(n, b.getInt64(2));
  idx = b.CreateSelect(b.CreateICmpEQ(v, b.getInt64(0)), b.getInt64(1), idx);
  return b.CreateSelect(b.CreateICmpSLT(v, b.getInt64(0)), b.getInt64(0), idx);
}

// 0 below min, 1 + (v - min) / step inside, 1 + (max - min) / step at or above max.
llvm::Value *lhist_bucket(llvm::IRBuilder<> &b, llvm::Value *v, const Type &t) {
  int64_t step = t.lhist_step > 0 ? t.lhist_step : 1;
  auto *mid = b.CreateAdd(b.CreateUDiv(b.CreateSub(v, b.getInt64(t.lhist_min)), b.getInt64(step)),
                          b.getInt64(1));
  auto *last = b.getInt64(1 + (t.lhist_max - t.lhist_min) / step);
  auto *idx = b.CreateSelect(b.CreateICmpSGE(v, b.getInt64(t.lhist_max)), last, mid);
  return b.CreateSelect(b.CreateICmpSLT(v, b.getInt64(t.lhist_min)), b.getInt64(0), idx);
}

} // namespace gpubt::codegen
