// IR helpers of the device lowering: local buffers, typed loads/stores, the per-launch context
// and device-scope atomics (see device_context.h).
#include <algorithm>

#include "codegen/device/device_context.h"
#include "codegen/int_ops.h"

namespace gpubt::codegen::device {

using frontend::Type;
using frontend::TypeKind;

bool is_memory_type(const Type &t) {
  return t.kind == TypeKind::String || t.kind == TypeKind::Tuple;
}

llvm::Value *local_buffer(DevCtx &c, uint32_t size) {
  size = std::max<uint32_t>(8, (size + 7) / 8 * 8);
  llvm::IRBuilder<> eb(c.ctx);
  auto &entry = c.fn->getEntryBlock();
  eb.SetInsertPoint(&entry, entry.getFirstInsertionPt());
  auto *a = eb.CreateAlloca(llvm::ArrayType::get(eb.getInt64Ty(), size / 8));
  a->setAlignment(llvm::Align(8));
  eb.CreateMemSet(a, eb.getInt8(0), size, llvm::Align(8));
  return a;
}

llvm::Value *load_u64(DevCtx &c, llvm::Value *p) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), p, llvm::Align(8));
}
void store_u64(DevCtx &c, llvm::Value *p, llvm::Value *v) {
  c.b.CreateAlignedStore(v, p, llvm::Align(8));
}

llvm::Value *ctx_field(DevCtx &c, uint32_t offset, uint32_t size) {
  auto *ty = c.b.getIntNTy(size * 8);
  auto *v = c.b.CreateAlignedLoad(ty, byte_ptr(c, c.userdata, offset), llvm::Align(size));
  return c.b.CreateZExt(v, c.b.getInt64Ty());
}

llvm::Value *global_ptr(DevCtx &c, llvm::Value *address) {
  return c.b.CreateIntToPtr(address, c.b.getPtrTy(c.target.global_address_space()));
}

static void store_int(DevCtx &c, llvm::Value *p, llvm::Value *v, uint32_t size, uint32_t align) {
  if (size == 0 || size > 8)
    size = 8;
  c.b.CreateAlignedStore(c.b.CreateTrunc(v, c.b.getIntNTy(size * 8)), p,
                         llvm::Align(std::min(size, align)));
}

// BASE is aligned to BASE_ALIGN, SRC to SRC.align (a tuple's string element may not be 8).
static void store_at(DevCtx &c, llvm::Value *base, uint32_t base_align, uint32_t off,
                     const Type &dst_t, DVal src, const Type &src_t) {
  llvm::Value *dst = byte_ptr(c, base, off);
  switch (dst_t.kind) {
  case TypeKind::String: {
    uint32_t n = std::min(dst_t.size, src_t.kind == TypeKind::String ? src_t.size : 0u);
    // Whole words while they last (both ends are 8-aligned): 64 byte loads of a kernel name per
    // thread cost a Vulkan vector add 4.7x.
    uint32_t words = align_at(base_align, off) < 8 || src.align < 8 ? 0 : n / 8;
    for (uint32_t i = 0; i < words; ++i)
      store_u64(c, byte_ptr(c, dst, 8 * i), load_u64(c, byte_ptr(c, src.v, 8 * i)));
    for (uint32_t i = 8 * words; i < n; ++i)
      c.b.CreateStore(c.b.CreateLoad(c.b.getInt8Ty(), byte_ptr(c, src.v, i)), byte_ptr(c, dst, i));
    if (n == dst_t.size && n > 0) // cut: keep the NUL
      c.b.CreateStore(c.b.getInt8(0), byte_ptr(c, dst, n - 1));
    return;
  }
  case TypeKind::Tuple: {
    auto doffs = frontend::tuple_offsets(dst_t.elems, nullptr);
    auto soffs = frontend::tuple_offsets(src_t.elems, nullptr);
    for (size_t i = 0; i < dst_t.elems.size() && i < src_t.elems.size(); ++i) {
      DVal e = load_value(c, byte_ptr(c, src.v, soffs[i]), src_t.elems[i]);
      e.align = align_at(src.align, soffs[i]);
      store_at(c, base, base_align, off + doffs[i], dst_t.elems[i], e, src_t.elems[i]);
    }
    return;
  }
  default:
    if (!src.v->getType()->isIntegerTy()) {
      set_error(c, "codegen: cannot store " + to_string(src_t) + " as " + to_string(dst_t));
      return;
    }
    store_int(c, dst, normalize_int(c.b, src.v, dst_t), dst_t.size, align_at(base_align, off));
  }
}

void store_value(DevCtx &c, llvm::Value *dst, const Type &dst_t, DVal src, const Type &src_t,
                 uint32_t offset, uint32_t dst_align) {
  store_at(c, dst, dst_align, offset, dst_t, src, src_t);
}

DVal load_value(DevCtx &c, llvm::Value *ptr, const Type &t) {
  if (is_memory_type(t))
    return {ptr};
  uint32_t size = t.is_integer_like() && t.size && t.size <= 8 ? t.size : 8;
  llvm::Value *v = c.b.CreateLoad(c.b.getIntNTy(size * 8), ptr);
  v = t.is_signed ? c.b.CreateSExt(v, c.b.getInt64Ty()) : c.b.CreateZExt(v, c.b.getInt64Ty());
  return {v};
}

static llvm::SyncScope::ID device_scope(DevCtx &c) {
  return c.ctx.getOrInsertSyncScopeID("device");
}

llvm::Value *atomic_rmw(DevCtx &c, llvm::AtomicRMWInst::BinOp op, llvm::Value *p, llvm::Value *v,
                        llvm::AtomicOrdering order) {
  return c.b.CreateAtomicRMW(op, p, v, llvm::Align(8), order, device_scope(c));
}

llvm::Value *load_relaxed(DevCtx &c, llvm::Value *p) {
  auto *l = c.b.CreateAlignedLoad(c.b.getInt64Ty(), p, llvm::Align(8));
  l->setAtomic(llvm::AtomicOrdering::Monotonic, device_scope(c));
  return l;
}

llvm::Value *load_hint(DevCtx &c, llvm::Value *p) {
  // A plain (weak) ld: NVPTX lowers even an unordered atomic load to ld.relaxed.sys, which skips
  // L1. Aligned 8-byte accesses do not tear on the GPU; the word's users check what it says.
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), p, llvm::Align(8));
}

void store_relaxed(DevCtx &c, llvm::Value *p, llvm::Value *v) {
  auto *s = c.b.CreateAlignedStore(v, p, llvm::Align(8));
  s->setAtomic(llvm::AtomicOrdering::Monotonic, device_scope(c));
}

llvm::Value *load_acquire(DevCtx &c, llvm::Value *p) {
  auto *l = c.b.CreateAlignedLoad(c.b.getInt64Ty(), p, llvm::Align(8));
  l->setAtomic(llvm::AtomicOrdering::Acquire, device_scope(c));
  return l;
}

void store_release(DevCtx &c, llvm::Value *p, llvm::Value *v) {
  auto *s = c.b.CreateAlignedStore(v, p, llvm::Align(8));
  s->setAtomic(llvm::AtomicOrdering::Release, device_scope(c));
}

std::pair<llvm::Value *, llvm::Value *> compare_exchange(DevCtx &c, llvm::Value *p,
                                                         llvm::Value *expected, llvm::Value *v) {
  auto *x =
      c.b.CreateAtomicCmpXchg(p, expected, v, llvm::Align(8), llvm::AtomicOrdering::AcquireRelease,
                              llvm::AtomicOrdering::Acquire, device_scope(c));
  return {c.b.CreateExtractValue(x, 0), c.b.CreateExtractValue(x, 1)};
}

WarpElection elect_lowest_lane(DevCtx &c, llvm::Value *lanes) {
  auto &b = c.b;
  auto *lane = b.CreateTrunc(c.target.mask_lane(b), b.getInt32Ty());
  auto *leader = b.CreateIntrinsic(llvm::Intrinsic::cttz, {b.getInt32Ty()}, {lanes, b.getTrue()});
  return {lane, leader};
}

llvm::Value *active_lanes(DevCtx &c) {
  return c.b.CreateTrunc(c.target.special(c.b, Special::ActiveMask), c.b.getInt32Ty());
}

} // namespace gpubt::codegen::device
