// The BPF side of the lowering core's hooks (lower_context.h): values in stack and scratch
// slots, map access, string, array and buffer comparison, pointers and C records.
#include "codegen/bpf/lower_expr.h"

#include <algorithm>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_api.h"
#include "codegen/bpf/lower_hang.h"
#include "codegen/bpf/lower_maps.h"
#include "codegen/bpf/lower_pointer.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

// A chain of blocks, a byte each, as bpftrace's strncmp: a differing byte branches out unequal,
// a shared NUL out equal. Only forward jumps, no loop for the verifier to bound; and one byte
// pair live at a time. (The straight-line select chain this replaces kept every byte's compare
// live to the end: 64-byte strings spilled past the 512-byte BPF stack.)
llvm::Value *strings_equal(LowerCtx &c, Val a, uint32_t na, Val b2, uint32_t nb, uint32_t limit) {
  auto &b = c.b;
  uint32_t n = std::min({na, nb, limit});
  if (n == 0)
    return b.getTrue();
  auto *done = llvm::BasicBlock::Create(c.ctx, "strcmp.done", c.fn);
  auto *phi = llvm::PHINode::Create(b.getInt1Ty(), 2 * n, "strcmp.eq", done);
  for (uint32_t i = 0; i < n; ++i) {
    auto *ca = b.CreateLoad(b.getInt8Ty(), byte_ptr(c, a.v, i));
    auto *cb = b.CreateLoad(b.getInt8Ty(), byte_ptr(c, b2.v, i));
    auto *same = llvm::BasicBlock::Create(c.ctx, "strcmp.same", c.fn);
    phi->addIncoming(b.getFalse(), b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpNE(ca, cb), done, same);
    b.SetInsertPoint(same);
    if (i + 1 == n)
      break;
    auto *next = llvm::BasicBlock::Create(c.ctx, "strcmp.next", c.fn);
    phi->addIncoming(b.getTrue(), same);
    b.CreateCondBr(b.CreateICmpEQ(ca, b.getInt8(0)), done, next);
    b.SetInsertPoint(next);
  }
  phi->addIncoming(b.getTrue(), b.GetInsertBlock());
  b.CreateBr(done);
  b.SetInsertPoint(done);
  return phi;
}

bool LowerCtx::holds_in_memory(const Type &t) const { return is_memory_type(t); }

llvm::Value *LowerCtx::temp_buffer(uint32_t size, bool zeroed) {
  llvm::Value *buf = scratch_slot(*this, size);
  if (zeroed)
    zero_bytes(*this, buf, 8, size);
  return buf;
}

llvm::Value *LowerCtx::variable_slot(const Type &t) {
  return is_memory_type(t) ? scratch_slot(*this, t.size) : stack_i64(*this);
}

Val LowerCtx::load(llvm::Value *ptr, uint32_t align, const Type &t) {
  return load_value(*this, ptr, align, t);
}

void LowerCtx::store(llvm::Value *dst, uint32_t align, const Type &dst_t, Val src,
                     const Type &src_t) {
  store_value(*this, dst, align, dst_t, src, src_t);
}

Val LowerCtx::string_value(const StringExpr &e) {
  uint32_t size = std::max<uint32_t>(e.type.size, e.value.size() + 1);
  llvm::Value *buf = scratch_slot(*this, size);
  uint32_t words = (size + 7) / 8;
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < 8; ++i) {
      size_t at = w * 8 + i;
      if (at < e.value.size())
        v |= uint64_t(uint8_t(e.value[at])) << (8 * i);
    }
    b.CreateAlignedStore(b.getInt64(v), byte_ptr(buf, w * 8), llvm::Align(8));
  }
  return {buf, 8};
}

Val LowerCtx::map_read(const MapExpr &m) { return read_map(*this, m); }

void LowerCtx::map_write(const MapExpr &m, Val v, const Type &v_type) {
  write_map(*this, m, v, v_type);
}

bool LowerCtx::map_aggregate(const MapExpr &m, const CallExpr &call) {
  if (!is_aggregation(call))
    return false;
  lower_call(*this, call, &m);
  return true;
}

Val LowerCtx::builtin_value(const BuiltinExpr &e) { return lower_builtin(*this, e); }

Val LowerCtx::call_value(const CallExpr &e) { return lower_call(*this, e, nullptr); }

Val LowerCtx::deref_value(const UnaryExpr &e) { return lower_deref(*this, e); }

// &$x: the address of the variable's slot, an integer as every pointer is here.
Val LowerCtx::address_of(const UnaryExpr &e) {
  const Expr &v = *e.operand;
  return {b.CreatePtrToInt(variable(v.as<VariableExpr>().key(), v.type).ptr, b.getInt64Ty())};
}

Val LowerCtx::index_value(const IndexExpr &e) { return lower_index(*this, e); }

Val LowerCtx::field_value(const FieldExpr &e) {
  if (is_builtin(*e.base, BuiltinId::Args) && ap->provider == Provider::GpuHang)
    return lower_hang_arg(*this, e);
  if (is_builtin(*e.base, BuiltinId::Args))
    return ap->provider == Provider::Tracepoint ? lower_tracepoint_arg(*this, e)
                                                : lower_api_arg(*this, e);
  const Type &bt = e.base->type;
  if (bt.kind == TypeKind::Record || bt.kind == TypeKind::Pointer)
    return lower_record_field(*this, e);
  set_error("codegen: field access on " + to_string(bt));
  return {b.getInt64(0)};
}

// Strings: bpftrace's string ==. Arrays: same type (check_types), equal bytes. Buffers: the
// length byte first, then the data (zero past the length), so unequal lengths differ.
std::optional<Val> LowerCtx::memory_compare(const BinaryExpr &e, Val l, Val r) {
  const Type &lt = e.lhs->type;
  llvm::Value *eq = nullptr;
  if (lt.kind == TypeKind::String && e.rhs->type.kind == TypeKind::String) {
    eq = strings_equal(*this, l, lt.size, r, e.rhs->type.size);
  } else if (lt.kind == TypeKind::Array || lt.kind == TypeKind::Buffer) {
    eq = b.getTrue();
    uint32_t size = std::min(lt.size, e.rhs->type.size);
    for (uint32_t off = 0, n = 8; off < size; off += n) {
      while (off + n > size) // 8-byte words, then 4, 2, 1 for the tail
        n /= 2;
      auto word = [&](Val v) {
        return load_int(*this, byte_ptr(v.v, off), align_at(v.align, off), n, false);
      };
      eq = b.CreateAnd(eq, b.CreateICmpEQ(word(l), word(r)));
    }
  } else {
    return std::nullopt;
  }
  if (e.op == BinaryOp::Ne)
    eq = b.CreateNot(eq);
  return Val{b.CreateZExt(eq, b.getInt64Ty())};
}

std::string LowerCtx::operator_error(const BinaryExpr &e) {
  return "codegen: operator on non-integer operands " + to_string(e.lhs->type) + ", " +
         to_string(e.rhs->type);
}

} // namespace gpubt::codegen::bpf
