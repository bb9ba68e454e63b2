// The slot cache of updates under launch-uniform keys (gpubt_device_ctx::slot_cache): every warp
// of a launch updates the same key, so the first to find its slot writes where it is in the
// kernel's ctx, and the others add to it with no hash, search or key compare.
#include <algorithm>

#include "codegen/device/device_context.h"
#include "codegen/ir_control.h"
#include "codegen/layout/launch_uniform_keys.h"
#include "runtime/abi/device_abi.h"

namespace gpubt::codegen::device {

namespace {

// Cache words per update site at most. A key spread over more slots (--gpu-key-spread=256)
// keeps this many of them in use (SM n the word n % 32): 256 places measured as 32 did.
constexpr uint32_t kMaxWays = 32;

} // namespace

std::optional<CachedKey> cached_key(DevCtx &c, const frontend::MapExpr &m, const DeviceMap &dm) {
  // A map the host copies in before each launch may move its keys (DeviceMapSpec::from_host).
  if (!c.slot_cache_used || dm.layout.from_host || dm.layout.key_size == 0 || dm.layout.prefilled)
    return std::nullopt;
  auto values = layout::launch_values_in_key(m);
  // The tag holds one launch value; a key of two (gdim_x, bdim_x) searches as other keys do.
  if (!values || values->size() > 1)
    return std::nullopt;
  uint32_t ways = std::clamp<uint32_t>(dm.key_spread, 1, kMaxWays);
  if (*c.slot_cache_used + ways > GPUBT_SLOT_CACHE_WORDS)
    return std::nullopt;
  CachedKey k{*c.slot_cache_used, ways, values->empty() ? nullptr : values->front()};
  *c.slot_cache_used += ways;
  return k;
}

Slot cached_slot(DevCtx &c, const DeviceMap &dm, const CachedKey &k, bool acquire,
                 const std::function<std::vector<llvm::Value *>()> &key_words) {
  auto &b = c.b;
  llvm::Value *index = b.getInt64(k.first);
  if (k.ways > 1) // this SM's place among the key's slots, as find_slot spreads it (a power of 2)
    index = b.CreateAdd(index,
                        b.CreateAnd(b.CreateZExt(c.target.special(b, Special::SmId), b.getInt64Ty()),
                                    b.getInt64(k.ways - 1)));
  auto *cell = b.CreateGEP(
      b.getInt8Ty(), c.userdata,
      b.CreateAdd(b.getInt64(offsetof(gpubt_device_ctx, slot_cache)), b.CreateShl(index, 3)));
  llvm::Value *tag = b.getInt64(0);
  if (k.launch_value) // a grid or block size: 32 bits
    tag = b.CreateShl(b.CreateZExt(lower_expr(c, *k.launch_value).v, b.getInt64Ty()), 32);
  // A count or sum adds to a slot its claimer wrote no value into: the word is a hint, read where
  // the SM's L1 has it (a relaxed load went to L2 every time: 4.5x on gpu:mem's vectorAdd against
  // 1.4x for an unkeyed count, H200). Stale, it is 0 (a miss: the search finds the same slot) or
  // another SM's slot for the same key (the word's tag says whose launch value). A min/max claimer
  // writes the start value: acquire, which its release of the word pairs with.
  // The table's address (a ctx load, cached in L1) is read alongside the cache word, not after.
  llvm::Value *base = map_base(c, dm);
  llvm::Value *word = acquire ? load_acquire(c, cell) : load_hint(c, cell);
  auto *low = b.CreateAnd(word, b.getInt64(0xffffffffu));
  auto *hit = b.CreateAnd(b.CreateICmpNE(low, b.getInt64(0)),
                          b.CreateICmpEQ(b.CreateXor(word, low), tag));
  auto *hit_bb = llvm::BasicBlock::Create(c.ctx, "cache.hit", c.fn);
  auto *miss_bb = llvm::BasicBlock::Create(c.ctx, "cache.miss", c.fn);
  auto *join = llvm::BasicBlock::Create(c.ctx, "cache.done", c.fn);
  b.CreateCondBr(hit, hit_bb, miss_bb);

  b.SetInsertPoint(hit_bb);
  auto *cached_entry = entry_at(c, dm, base, b.CreateSub(low, b.getInt64(1)));
  b.CreateBr(join);

  b.SetInsertPoint(miss_bb);
  // The search loop makes the key again from a ctx pointer the optimizer cannot see through: the
  // kernel name's 8 words, held in registers across it, raised vectorAdd from 20 registers to 56
  // (half its occupancy) with gpu:mem:global:vectorAdd { @[kernel] = count(); }
  // (bench/gpu/probe_size.sh); loaded again, they cost only on the slots the search visits.
  auto remake = [&] {
    llvm::Value *ctx = c.userdata;
    c.userdata = c.target.opaque_pointer(b, ctx);
    auto words = key_words();
    c.userdata = ctx;
    return words;
  };
  Slot s = find_slot(c, dm, key_words(), true, true, remake);
  emit_if_else(
      b, c.fn, s.found,
      [&] { store_release(c, cell, b.CreateOr(tag, b.CreateAdd(s.index, b.getInt64(1)))); }, {});
  auto *miss_end = b.GetInsertBlock();
  b.CreateBr(join);

  b.SetInsertPoint(join);
  auto *entry = b.CreatePHI(cached_entry->getType(), 2);
  auto *found = b.CreatePHI(b.getInt1Ty(), 2);
  entry->addIncoming(cached_entry, hit_bb);
  found->addIncoming(b.getTrue(), hit_bb);
  entry->addIncoming(s.entry, miss_end);
  found->addIncoming(s.found, miss_end);
  return {entry, found, nullptr};
}

} // namespace gpubt::codegen::device
