// IR building blocks for BPF (see ir_helpers.h).
#include "codegen/bpf/ir_helpers.h"

#include <llvm/IR/IntrinsicsBPF.h>

#include "codegen/int_ops.h"

#include <algorithm>
#include <vector>

namespace gpubt::codegen::bpf {

using frontend::Type;
using frontend::TypeKind;

llvm::Value *call_helper(LowerCtx &c, int helper, llvm::ArrayRef<llvm::Value *> args,
                         llvm::Type *ret) {
  std::vector<llvm::Type *> tys;
  std::vector<llvm::Value *> vals;
  for (auto *a : args) {
    tys.push_back(a->getType());
    vals.push_back(a);
  }
  auto *fty = llvm::FunctionType::get(ret ? ret : c.b.getInt64Ty(), tys, false);
  // BPF helpers are called through a constant "address" equal to their id.
  auto *callee = llvm::ConstantExpr::getIntToPtr(c.b.getInt64(helper), c.b.getPtrTy());
  return c.b.CreateCall(fty, callee, vals);
}

llvm::Value *pseudo_imm64(LowerCtx &c, int src_reg, int64_t imm) {
  auto *pseudo = llvm::Intrinsic::getOrInsertDeclaration(&c.mod, llvm::Intrinsic::bpf_pseudo);
  return c.b.CreateCall(pseudo, {c.b.getInt64(src_reg), c.b.getInt64(imm)});
}

llvm::Value *map_ref(LowerCtx &c, int map_index) {
  return c.b.CreateIntToPtr(pseudo_imm64(c, 1 /* BPF_PSEUDO_MAP_FD */, map_index),
                            c.b.getPtrTy());
}

llvm::Value *scratch_slot(LowerCtx &c, uint32_t size) {
  // Small temporaries (map keys of a word or two) go on the stack: a program that needs no
  // scratch skips its per-hit map lookup (see drop_unused_scratch).
  constexpr uint32_t small = 32, stack_budget = 128;
  uint32_t rounded = (std::max<uint32_t>(size, 1) + 7) / 8 * 8;
  if (rounded <= small && c.stack_temps_used + rounded <= stack_budget) {
    c.stack_temps_used += rounded;
    llvm::IRBuilder<> eb(&c.fn->getEntryBlock(), c.fn->getEntryBlock().begin());
    auto *slot = eb.CreateAlloca(llvm::ArrayType::get(eb.getInt8Ty(), rounded));
    slot->setAlignment(llvm::Align(8));
    return slot;
  }
  uint32_t off = c.scratch_used;
  c.scratch_used += (std::max<uint32_t>(size, 1) + 7) / 8 * 8;
  return byte_ptr(c, c.scratch, off);
}

llvm::Value *stack_i64(LowerCtx &c) {
  llvm::IRBuilder<> eb(&c.fn->getEntryBlock(), c.fn->getEntryBlock().begin());
  auto *a = eb.CreateAlloca(eb.getInt64Ty());
  eb.CreateStore(eb.getInt64(0), a);
  return a;
}

static llvm::Type *int_ty(LowerCtx &c, uint32_t bytes) {
  return llvm::IntegerType::get(c.ctx, bytes * 8);
}

// Copies/zeroes in the widest chunks both sides' alignment allows: BPF has no unaligned
// access, and the verifier insists on aligned stack access.
static uint32_t chunk(uint32_t align, uint32_t off, uint32_t left) {
  uint32_t w = 8;
  while (w > 1 && (w > left || align_at(align, off) < w))
    w /= 2;
  return w;
}

void zero_bytes(LowerCtx &c, llvm::Value *dst, uint32_t align, uint32_t size) {
  for (uint32_t off = 0; off < size;) {
    uint32_t w = chunk(align, off, size - off);
    c.b.CreateAlignedStore(llvm::ConstantInt::get(int_ty(c, w), 0), byte_ptr(c, dst, off),
                           llvm::Align(w));
    off += w;
  }
}

void copy_bytes(LowerCtx &c, llvm::Value *dst, uint32_t dst_align, llvm::Value *src,
                uint32_t src_align, uint32_t size) {
  for (uint32_t off = 0; off < size;) {
    uint32_t w = std::min(chunk(dst_align, off, size - off), chunk(src_align, off, size - off));
    auto *v = c.b.CreateAlignedLoad(int_ty(c, w), byte_ptr(c, src, off), llvm::Align(w));
    c.b.CreateAlignedStore(v, byte_ptr(c, dst, off), llvm::Align(w));
    off += w;
  }
}

void store_int(LowerCtx &c, llvm::Value *ptr, uint32_t align, llvm::Value *v, uint32_t size) {
  if (size == 0 || size > 8)
    size = 8;
  auto *t = c.b.CreateTrunc(v, int_ty(c, size));
  if (align >= size) {
    c.b.CreateAlignedStore(t, ptr, llvm::Align(size));
    return;
  }
  // Unaligned (an int inside a packed tuple): byte by byte.
  for (uint32_t i = 0; i < size; ++i)
    c.b.CreateStore(c.b.CreateTrunc(c.b.CreateLShr(v, i * 8), c.b.getInt8Ty()),
                    byte_ptr(c, ptr, i));
}

llvm::Value *load_int(LowerCtx &c, llvm::Value *ptr, uint32_t align, uint32_t size,
                      bool is_signed) {
  if (size == 0 || size > 8)
    size = 8;
  llvm::Value *v;
  if (align >= size) {
    v = c.b.CreateAlignedLoad(int_ty(c, size), ptr, llvm::Align(size));
  } else {
    v = c.b.getIntN(size * 8, 0);
    for (uint32_t i = 0; i < size; ++i) {
      auto *byte = c.b.CreateZExt(c.b.CreateLoad(c.b.getInt8Ty(), byte_ptr(c, ptr, i)),
                                  int_ty(c, size));
      v = c.b.CreateOr(v, c.b.CreateShl(byte, i * 8));
    }
  }
  return is_signed ? c.b.CreateSExt(v, c.b.getInt64Ty()) : c.b.CreateZExt(v, c.b.getInt64Ty());
}

llvm::Value *normalize(LowerCtx &c, llvm::Value *v, const Type &t) {
  return normalize_int(c.b, v, t);
}

bool is_memory_type(const Type &t) {
  return t.is_aggregate_value() || t.kind == TypeKind::UStack || t.kind == TypeKind::KStack ||
         t.kind == TypeKind::PyStack || t.kind == TypeKind::UstackPy;
}

static uint32_t int_size(const Type &t) {
  return t.is_integer_like() && t.size ? t.size : 8;
}

Val load_value(LowerCtx &c, llvm::Value *ptr, uint32_t align, const Type &t) {
  if (is_memory_type(t))
    return {ptr, align};
  return {load_int(c, ptr, align, int_size(t), t.is_signed), 8};
}

void store_value(LowerCtx &c, llvm::Value *dst, uint32_t dst_align, const Type &dst_t, Val src,
                 const Type &src_t) {
  switch (dst_t.kind) {
  case TypeKind::String:
  case TypeKind::Buffer: { // a buffer's length byte leads, so a shorter one keeps its length
    uint32_t n = src_t.kind == dst_t.kind ? std::min(dst_t.size, src_t.size) : 0;
    copy_bytes(c, dst, dst_align, src.v, src.align, n);
    if (dst_t.size > n)
      zero_bytes(c, byte_ptr(c, dst, n), align_at(dst_align, n), dst_t.size - n);
    return;
  }
  case TypeKind::UStack:
  case TypeKind::KStack:
  case TypeKind::PyStack:
  case TypeKind::UstackPy:
  case TypeKind::Inet:
  case TypeKind::MacAddr:
  case TypeKind::Record:
  case TypeKind::Array:
    if (src_t == dst_t)
      copy_bytes(c, dst, dst_align, src.v, src.align, dst_t.size);
    else
      zero_bytes(c, dst, dst_align, dst_t.size);
    return;
  case TypeKind::Tuple: {
    if (src_t == dst_t) {
      copy_bytes(c, dst, dst_align, src.v, src.align, dst_t.size);
      return;
    }
    zero_bytes(c, dst, dst_align, dst_t.size);
    auto doffs = frontend::tuple_offsets(dst_t.elems, nullptr);
    auto soffs = frontend::tuple_offsets(src_t.elems, nullptr);
    for (size_t i = 0; i < dst_t.elems.size(); ++i) {
      int j = frontend::source_field(dst_t, src_t, i); // a record's field of the same name
      if (j < 0)
        continue;
      uint32_t sa = align_at(src.align, soffs[j]);
      Val e = load_value(c, byte_ptr(c, src.v, soffs[j]), sa, src_t.elems[j]);
      store_value(c, byte_ptr(c, dst, doffs[i]), align_at(dst_align, doffs[i]), dst_t.elems[i], e,
                  src_t.elems[j]);
    }
    return;
  }
  default: {
    llvm::Value *v = src.v;
    if (is_memory_type(src_t)) // not expected after type checking
      v = c.b.getInt64(0);
    store_int(c, dst, dst_align, v, int_size(dst_t));
    return;
  }
  }
}

void start_dead_block(LowerCtx &c) {
  c.b.SetInsertPoint(llvm::BasicBlock::Create(c.ctx, "dead", c.fn));
}

} // namespace gpubt::codegen::bpf
