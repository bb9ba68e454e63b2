// tseries(v, interval, n[, agg]) as bpftrace's head updates it: the interval now is
// epoch = time / interval; its slot, epoch % n, ends the BPF key; this CPU's value of that slot
// (abi::TseriesValue) starts over when its epoch is an older one, then takes v. The runtime
// reads the latest epoch of each slot (runtime/output/tseries_rows.cpp).
#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_maps.h"

namespace gpubt::codegen::bpf {
namespace {

using frontend::TseriesAgg;
using frontend::TypeKind;

constexpr uint32_t kValue = 0, kMeta = 8, kEpoch = 16; // abi::TseriesValue's fields

llvm::Value *load64(LowerCtx &c, llvm::Value *p, uint32_t off) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, p, off), llvm::Align(8));
}
void store64(LowerCtx &c, llvm::Value *p, uint32_t off, llvm::Value *v) {
  c.b.CreateAlignedStore(v, byte_ptr(c, p, off), llvm::Align(8));
}

// The time: the wall clock's nanoseconds, or BPFTRACE_DUMMY_TS_MAP's value (0 while unset).
llvm::Value *tseries_now(LowerCtx &c) {
  const std::string &dummy = c.opts->dummy_ts_map;
  if (dummy.empty()) {
    auto *boot = call_helper(c, BPF_FUNC_ktime_get_boot_ns, {});
    return c.b.CreateAdd(boot, c.b.getInt64(c.opts->wall_clock_offset_ns));
  }
  auto it = c.sema->maps.find(dummy);
  if (it == c.sema->maps.end() || !it->second.key.is_none() ||
      it->second.value.kind != TypeKind::Integer || it->second.value.is_signed) {
    set_error(c, "BPFTRACE_DUMMY_TS_MAP: " + dummy +
                     " must be a map of the script without keys that holds an unsigned integer");
    return c.b.getInt64(0);
  }
  frontend::MapExpr clock;
  clock.name = dummy;
  return read_map(c, clock).v;
}

// Folds V into the slot's value at P, as AGG says.
void fold(LowerCtx &c, llvm::Value *p, llvm::Value *v, llvm::Value *now, TseriesAgg agg,
          bool is_signed) {
  auto &b = c.b;
  switch (agg) {
  case TseriesAgg::Last: // the latest value wins; meta says when, for merging the CPUs
    store64(c, p, kValue, v);
    store64(c, p, kMeta, now);
    break;
  case TseriesAgg::Avg:
    store64(c, p, kMeta, b.CreateAdd(load64(c, p, kMeta), b.getInt64(1)));
    store64(c, p, kValue, b.CreateAdd(load64(c, p, kValue), v));
    break;
  case TseriesAgg::Sum:
    store64(c, p, kValue, b.CreateAdd(load64(c, p, kValue), v));
    break;
  case TseriesAgg::Min:
  case TseriesAgg::Max: {
    auto *cur = load64(c, p, kValue);
    bool min = agg == TseriesAgg::Min;
    auto *better = is_signed ? (min ? b.CreateICmpSLT(v, cur) : b.CreateICmpSGT(v, cur))
                             : (min ? b.CreateICmpULT(v, cur) : b.CreateICmpUGT(v, cur));
    auto *unset = b.CreateICmpEQ(load64(c, p, kMeta), b.getInt64(0));
    store64(c, p, kValue, b.CreateSelect(b.CreateOr(unset, better), v, cur));
    store64(c, p, kMeta, b.getInt64(1));
    break;
  }
  }
}

} // namespace

void update_tseries(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t, llvm::Value *v) {
  const frontend::Type &vt = t.info->value;
  auto &b = c.b;
  if (vt.tseries_interval_ns <= 0 || vt.tseries_intervals <= 0)
    return set_error(c, "BUG: tseries map " + m.name + " without intervals");
  llvm::Value *now = tseries_now(c);
  auto *epoch = b.CreateUDiv(now, b.getInt64(uint64_t(vt.tseries_interval_ns)));
  llvm::Value *key = build_key(c, m, t);
  store64(c, key, bucket_offset(*t.info),
          b.CreateURem(epoch, b.getInt64(uint64_t(vt.tseries_intervals))));

  // A slot this CPU has not seen yet is created as {0, 0, epoch}, then updated in place.
  auto *map = map_ref(c, t.index);
  auto *found = call_helper(c, BPF_FUNC_map_lookup_elem, {map, key}, b.getPtrTy());
  auto *entry = b.GetInsertBlock();
  auto *miss = llvm::BasicBlock::Create(c.ctx, "tseries_miss", c.fn);
  auto *have = llvm::BasicBlock::Create(c.ctx, "tseries_have", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "tseries_done", c.fn);
  b.CreateCondBr(b.CreateIsNull(found), miss, have);

  b.SetInsertPoint(miss);
  llvm::Value *init = scratch_slot(c, sizeof(abi::TseriesValue));
  zero_bytes(c, init, 8, sizeof(abi::TseriesValue));
  store64(c, init, kEpoch, epoch);
  auto *ret = call_helper(c, BPF_FUNC_map_update_elem, {map, key, init, b.getInt64(BPF_ANY)});
  count_dropped_key(c, m, t, ret);
  auto *created = call_helper(c, BPF_FUNC_map_lookup_elem, {map, key}, b.getPtrTy());
  auto *miss_end = b.GetInsertBlock();
  b.CreateCondBr(b.CreateIsNull(created), done, have);

  b.SetInsertPoint(have);
  auto *p = b.CreatePHI(b.getPtrTy(), 2);
  p->addIncoming(found, entry);
  p->addIncoming(created, miss_end);
  if (vt.tseries_agg != TseriesAgg::Last) { // an older interval's value starts over
    auto *stale = b.CreateICmpNE(load64(c, p, kEpoch), epoch);
    store64(c, p, kValue, b.CreateSelect(stale, b.getInt64(0), load64(c, p, kValue)));
    store64(c, p, kMeta, b.CreateSelect(stale, b.getInt64(0), load64(c, p, kMeta)));
  }
  fold(c, p, v, now, vt.tseries_agg, vt.is_signed);
  store64(c, p, kEpoch, epoch);
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

} // namespace gpubt::codegen::bpf
