// Reads through pointers with bpf_probe_read_{user,kernel}, and fields and elements of record
// and array values already in memory.
#include "codegen/bpf/lower_pointer.h"

#include <linux/bpf.h>

#include "codegen/bpf/helper_errors.h"
#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

// Whether the pointer expression E leads back to curtask: then it is kernel memory wherever the
// probe is (`curtask->real_parent->pid` in a uprobe).
bool from_curtask(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Builtin:
    return e.as<BuiltinExpr>().id == BuiltinId::Curtask;
  case ExprKind::Field:
    return from_curtask(*e.as<FieldExpr>().base);
  case ExprKind::Index:
    return from_curtask(*e.as<IndexExpr>().base);
  case ExprKind::Cast:
    return from_curtask(*e.as<CastExpr>().operand);
  case ExprKind::Unary:
    return from_curtask(*e.as<UnaryExpr>().operand);
  default:
    return false;
  }
}

} // namespace

// Elsewhere bpftrace 0.17 calls bpf_probe_read, which on x86-64 reads user or kernel memory by
// the address (and says -EFAULT, not probe_read_kernel's -ERANGE, for a NULL pointer: -k shows it).
// A pointer into the program's own memory (&$x) is the kernel's.
int read_helper(const LowerCtx &c, const Expr *pointer) {
  if (pointer && pointer->type.to_program_memory)
    return BPF_FUNC_probe_read_kernel;
  bool user = (c.ap->provider == Provider::Uprobe || c.ap->provider == Provider::Uretprobe ||
               c.ap->provider == Provider::Usdt) &&
              !(pointer && from_curtask(*pointer));
  return user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read;
}

namespace {

// A value of type T at address ADDR (an i64), read with HELPER: integers in a zeroed stack slot,
// records, arrays and strings in a zeroed scratch slot of their size (zero where unreadable).
Val read_at(LowerCtx &c, int helper, llvm::Value *addr, const Type &t) {
  llvm::Value *src = c.b.CreateIntToPtr(addr, c.b.getPtrTy());
  if (is_memory_type(t)) {
    uint32_t size = t.size ? t.size : 1;
    llvm::Value *buf = scratch_slot(c, size);
    zero_bytes(c, buf, 8, size);
    llvm::Value *ret = call_helper(c, helper, {buf, c.b.getInt32(size), src});
    check_helper_result(c, HelperCheck::Level1, "probe_read", ret);
    return {buf, 8};
  }
  uint32_t size = t.size && t.size <= 8 ? t.size : 8;
  llvm::Value *slot = stack_i64(c);
  c.b.CreateStore(c.b.getInt64(0), slot);
  llvm::Value *ret = call_helper(c, helper, {slot, c.b.getInt32(size), src});
  check_helper_result(c, HelperCheck::Level1, "probe_read", ret);
  // Little-endian: the low `size` bytes of the zeroed slot hold the value.
  llvm::Value *raw = c.b.CreateLoad(c.b.getIntNTy(size * 8), slot);
  llvm::Value *wide = t.is_signed ? c.b.CreateSExt(raw, c.b.getInt64Ty())
                                  : c.b.CreateZExt(raw, c.b.getInt64Ty());
  return {wide};
}

llvm::Value *offset_addr(LowerCtx &c, llvm::Value *base, llvm::Value *offset) {
  return c.b.CreateAdd(base, offset);
}

// The bytes that hold a bitfield: 1, 2, 4 or 8.
uint32_t bitfield_bytes(uint16_t bits) {
  uint32_t n = ((bits >> 8) + (bits & 0xff) + 7) / 8;
  return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : 8;
}

// A bitfield from the unsigned integer RAW that holds it: shifted and masked, then
// sign-extended when the field's type is signed.
Val bitfield(LowerCtx &c, llvm::Value *raw, const Type &t, uint16_t bits) {
  uint32_t shift = bits >> 8, width = bits & 0xff;
  llvm::Value *v = c.b.CreateLShr(raw, shift);
  v = c.b.CreateAnd(v, c.b.getInt64(width >= 64 ? ~0ull : (1ull << width) - 1));
  if (t.is_signed && width < 64) {
    v = c.b.CreateShl(v, 64 - width);
    v = c.b.CreateAShr(v, 64 - width);
  }
  return {v};
}

} // namespace

Val lower_deref(LowerCtx &c, const UnaryExpr &e) {
  return read_at(c, read_helper(c, e.operand.get()), lower_expr(c, *e.operand).v, e.type);
}

Val lower_index(LowerCtx &c, const IndexExpr &e) {
  const Type &bt = e.base->type;
  Val base = lower_expr(c, *e.base);
  if (bt.kind == TypeKind::Array) {
    // check_types allows only literal indexes within the array here.
    int64_t i = e.index->kind == ExprKind::Integer ? e.index->as<IntegerExpr>().value : 0;
    uint32_t off = uint32_t(i) * bt.elems[0].size;
    return load_value(c, byte_ptr(c, base.v, off), align_at(base.align, off), e.type);
  }
  llvm::Value *index = lower_expr(c, *e.index).v;
  llvm::Value *scaled = c.b.CreateMul(index, c.b.getInt64(pointer_step(bt)));
  return read_at(c, read_helper(c, e.base.get()), offset_addr(c, base.v, scaled), e.type);
}

Val lower_record_field(LowerCtx &c, const FieldExpr &e) {
  const Type &bt = e.base->type;
  bool through_pointer = bt.kind == TypeKind::Pointer;
  const Type &rec = through_pointer ? c.sema->c_types.complete(bt.elems[0]) : bt;
  int i = field_index(rec, e.field);
  if (i < 0) {
    set_error(c, "codegen: no field " + e.field + " in " + to_string(rec));
    return {c.b.getInt64(0)};
  }
  uint32_t off = rec.offsets[i];
  uint16_t bits = size_t(i) < rec.bitfields.size() ? rec.bitfields[i] : 0;
  Val base = lower_expr(c, *e.base);
  int helper = read_helper(c, e.base.get());
  if (through_pointer && bits) {
    Type holder = Type::integer(bitfield_bytes(bits), false);
    return bitfield(c, read_at(c, helper, offset_addr(c, base.v, c.b.getInt64(off)), holder).v,
                    e.type, bits);
  }
  if (through_pointer)
    return read_at(c, helper, offset_addr(c, base.v, c.b.getInt64(off)), e.type);
  if (bits)
    return bitfield(c, load_int(c, byte_ptr(c, base.v, off), 1, bitfield_bytes(bits), false),
                    e.type, bits);
  return load_value(c, byte_ptr(c, base.v, off), align_at(base.align, off), e.type);
}

} // namespace gpubt::codegen::bpf
