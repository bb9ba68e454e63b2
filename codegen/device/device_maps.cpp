// Device maps: open-addressing hash tables in device memory (layout in runtime/abi/device_abi.h),
// claimed with atomicCAS, updated with device-scope atomics after warp-level aggregation: lanes
// whose key matches (match.any.sync) elect a leader that adds the group's count / sum / min / max.
#include <llvm/IR/Intrinsics.h>

#include "codegen/device/device_context.h"
#include "codegen/int_ops.h"
#include "codegen/ir_control.h"
#include "codegen/layout/launch_uniform_keys.h"
#include "runtime/abi/device_abi.h"

namespace gpubt::codegen::device {

using frontend::Type;
using frontend::TypeKind;
using Op = llvm::AtomicRMWInst::BinOp;

namespace {

constexpr uint32_t kHeaderSize = sizeof(gpubt_device_map_header);

// The map's key as device words: the user key laid out as on the host, zero-padded to 8.
std::vector<llvm::Value *> key_words(DevCtx &c, const frontend::MapExpr &m, const DeviceMap &dm) {
  std::vector<llvm::Value *> words;
  if (dm.layout.key_size == 0)
    return words;
  llvm::Value *key = local_buffer(c, dm.layout.key_size);
  const Type &kt = dm.info->key;
  if (m.keys.size() == 1) {
    store_value(c, key, kt, lower_expr(c, *m.keys[0]), m.keys[0]->type);
  } else if (kt.kind == TypeKind::Tuple) {
    auto offs = frontend::tuple_offsets(kt.elems, nullptr);
    for (size_t i = 0; i < m.keys.size() && i < kt.elems.size(); ++i)
      store_value(c, key, kt.elems[i], lower_expr(c, *m.keys[i]), m.keys[i]->type, offs[i]);
  }
  for (uint32_t i = 0; i < dm.layout.key_size / 8; ++i)
    words.push_back(load_u64(c, byte_ptr(c, key, 8 * i)));
  return words;
}

// Which of the key's words may differ between the lanes of a warp: the words of its
// launch-uniform parts (the kernel name's 8 of `@[kernel, tid % 4]`) are every lane's.
std::vector<bool> varying_words(const frontend::MapExpr &m, const DeviceMap &dm) {
  std::vector<bool> out(dm.layout.key_size / 8, false);
  auto mark = [&](uint32_t offset, uint32_t size) {
    for (uint32_t w = offset / 8; w < out.size() && w < (offset + size + 7) / 8; ++w)
      out[w] = true;
  };
  const Type &kt = dm.info->key;
  if (m.keys.size() > 1 && kt.kind == TypeKind::Tuple) {
    auto offs = frontend::tuple_offsets(kt.elems, nullptr);
    for (size_t i = 0; i < m.keys.size() && i < kt.elems.size(); ++i)
      if (!layout::launch_uniform(*m.keys[i]))
        mark(offs[i], kt.elems[i].size);
  } else if (m.keys.size() != 1 || !layout::launch_uniform(*m.keys[0])) {
    mark(0, dm.layout.key_size);
  }
  return out;
}

// MurmurHash3's 64-bit finalizer over the words: consecutive integer keys (tids) spread over
// the table instead of forming one long run for linear probing to walk. Part of the device ABI:
// gpubt_key_hash (runtime/abi/device_abi.h) computes the same on the host, where the agent
// places a host map's entries; change both together.
llvm::Value *hash_words(DevCtx &c, const std::vector<llvm::Value *> &words) {
  auto &b = c.b;
  auto fmix = [&](llvm::Value *h) {
    h = b.CreateMul(b.CreateXor(h, b.CreateLShr(h, 33)), b.getInt64(0xff51afd7ed558ccdull));
    h = b.CreateMul(b.CreateXor(h, b.CreateLShr(h, 33)), b.getInt64(0xc4ceb9fe1a85ec53ull));
    return b.CreateXor(h, b.CreateLShr(h, 33));
  };
  llvm::Value *h = b.getInt64(0x9e3779b97f4a7c15ull);
  for (auto *w : words)
    h = fmix(b.CreateAdd(b.CreateMul(h, b.getInt64(31)), w));
  return h;
}

llvm::BasicBlock *block(DevCtx &c, const char *name) {
  return llvm::BasicBlock::Create(c.ctx, name, c.fn);
}

// The first value word's initial value when a slot is claimed (min/max start at the far end).
llvm::Value *initial_word0(DevCtx &c, const Type &vt) {
  if (vt.kind == TypeKind::Min)
    return c.b.getInt64(vt.is_signed ? INT64_MAX : UINT64_MAX);
  if (vt.kind == TypeKind::Max)
    return c.b.getInt64(vt.is_signed ? INT64_MIN : 0);
  return nullptr;
}

// Whether KEY's entry found with no acquire load can take the update: a key word holds 0 until
// its slot's claimer writes it, then the key for good, so a word read equal to a nonzero word of
// ours is that key's. With every word of ours nonzero, a match is our entry even while its
// claimer is still writing it, which for these kinds (atomic adds, no start value) is enough.
bool matches_without_acquire(const Type &vt) {
  switch (vt.kind) {
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Avg:
  case TypeKind::Stats:
  case TypeKind::Hist:
  case TypeKind::Lhist:
    return true;
  default:
    return false;
  }
}

} // namespace

llvm::Value *map_base(DevCtx &c, const DeviceMap &dm) {
  auto off = offsetof(gpubt_device_ctx, maps) + 8 * dm.slot;
  return global_ptr(c, ctx_field(c, off, 8));
}

llvm::Value *entry_at(DevCtx &c, const DeviceMap &dm, llvm::Value *base, llvm::Value *index) {
  auto *offset = c.b.CreateAdd(c.b.getInt64(kHeaderSize),
                               c.b.CreateMul(index, c.b.getInt64(dm.layout.entry_size)));
  return c.b.CreateGEP(c.b.getInt8Ty(), base, offset);
}

Slot find_slot(DevCtx &c, const DeviceMap &dm, const std::vector<llvm::Value *> &words,
               bool claim, bool for_update,
               const std::function<std::vector<llvm::Value *>()> &remake) {
  auto &b = c.b;
  const auto &L = dm.layout;
  llvm::Value *base = map_base(c, dm);
  uint64_t mask = L.capacity - 1;
  llvm::Value *start = words.empty() ? b.getInt64(0) : hash_words(c, words);
  auto sm = [&] { return b.CreateZExt(c.target.special(b, Special::SmId), b.getInt64Ty()); };
  if (dm.stripe_step) // Min/Max start from the type's far end: claimed like any slot
    start = b.CreateMul(sm(), b.getInt64(dm.stripe_step));
  if (dm.key_spread) // this SM's place among the key's (device_map_layout.h)
    start = b.CreateAdd(start, b.CreateMul(b.CreateURem(sm(), b.getInt64(dm.key_spread)),
                                           b.getInt64(L.capacity / dm.key_spread)));
  // The sequence reaches every slot: an update is dropped only when the table is full.
  uint32_t limit = L.capacity;
  // An update of a key whose words are all nonzero first compares the key with no acquire
  // load (matches_without_acquire): `@[tid % 1024]` then costs a load, a compare and the add.
  llvm::Value *nonzero = nullptr;
  if (claim && for_update && !words.empty() && matches_without_acquire(dm.info->value)) {
    nonzero = b.getTrue();
    for (auto *w : words)
      nonzero = b.CreateAnd(nonzero, b.CreateICmpNE(w, b.getInt64(0)));
  }

  auto *pre = b.GetInsertBlock();
  auto *loop = block(c, "slot.loop"), *wait = block(c, "slot.wait"), *spin = block(c, "slot.spin"),
       *compare = block(c, "slot.compare"), *next = block(c, "slot.next"),
       *full = block(c, "slot.full");
  auto *state_check = nonzero ? block(c, "slot.state") : loop;
  auto *try_claim = claim ? block(c, "slot.claim") : nullptr;
  auto *claimed = claim ? block(c, "slot.claimed") : nullptr;
  auto *done = block(c, "slot.done");
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  auto *i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), pre);
  auto *idx = b.CreateAnd(b.CreateAdd(start, i), mask);
  auto *entry = entry_at(c, dm, base, idx);
  auto key = [&] { return remake ? remake() : words; };
  if (nonzero) {
    llvm::Value *proven = nonzero;
    auto here = key();
    for (size_t k = 0; k < here.size(); ++k)
      proven = b.CreateAnd(
          proven, b.CreateICmpEQ(load_relaxed(c, byte_ptr(c, entry, 8 + 8 * k)), here[k]));
    b.CreateCondBr(proven, done, state_check);
    b.SetInsertPoint(state_check);
  }
  auto *state = load_acquire(c, entry);
  auto *is_empty = b.CreateICmpEQ(state, b.getInt64(GPUBT_SLOT_EMPTY));
  b.CreateCondBr(is_empty, claim ? try_claim : done, wait);

  llvm::Value *old = nullptr;
  if (claim) {
    b.SetInsertPoint(try_claim);
    auto [prev, ok] =
        compare_exchange(c, entry, b.getInt64(GPUBT_SLOT_EMPTY), b.getInt64(GPUBT_SLOT_BUSY));
    old = prev;
    b.CreateCondBr(ok, claimed, wait);

    b.SetInsertPoint(claimed);
    // Relaxed atomic stores: the words may be read with no acquire (matches_without_acquire).
    auto here = key();
    for (size_t k = 0; k < here.size(); ++k)
      store_relaxed(c, byte_ptr(c, entry, 8 + 8 * k), here[k]);
    if (auto *init = initial_word0(c, dm.info->value))
      store_u64(c, byte_ptr(c, entry, 8 + L.key_size), init);
    store_release(c, entry, b.getInt64(GPUBT_SLOT_READY));
    b.CreateBr(done);
  }

  // Another thread is writing this slot's key: wait until it publishes it.
  b.SetInsertPoint(wait);
  auto *s = b.CreatePHI(b.getInt64Ty(), 3);
  s->addIncoming(state, state_check);
  if (claim)
    s->addIncoming(old, try_claim);
  b.CreateCondBr(b.CreateICmpEQ(s, b.getInt64(GPUBT_SLOT_BUSY)), spin, compare);
  b.SetInsertPoint(spin);
  bool lockstep = c.target.lockstep_lanes();
  if (lockstep) {
    // The writer may be a lane of this subgroup, which (structured control flow) writes the key
    // only once every lane left this loop: waiting would never end. The key goes on to the next
    // slot instead; a key in two slots is merged on the host like a key of two GPUs. A map
    // without a key (one entry, or an SM's stripe) has no other slot for it: its slot is
    // already the one, so the update goes there: its writer writes no key, and a min/max
    // writer's start value lands before the update when both are lanes of one subgroup (from
    // another subgroup, an update in the few instructions between claim and start is lost).
    b.CreateBr(words.empty() ? compare : next);
  } else {
    s->addIncoming(load_acquire(c, entry), spin);
    b.CreateBr(wait);
  }

  b.SetInsertPoint(compare);
  llvm::Value *eq = b.getTrue();
  auto here = key();
  for (size_t k = 0; k < here.size(); ++k)
    eq = b.CreateAnd(eq, b.CreateICmpEQ(load_u64(c, byte_ptr(c, entry, 8 + 8 * k)), here[k]));
  b.CreateCondBr(eq, done, next);

  b.SetInsertPoint(next);
  auto *i1 = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(i1, next);
  b.CreateCondBr(b.CreateICmpULT(i1, b.getInt64(limit)), loop, full);

  b.SetInsertPoint(full);
  if (claim)
    atomic_rmw(c, Op::Add, byte_ptr(c, base, offsetof(gpubt_device_map_header, drops)),
               b.getInt64(1));
  b.CreateBr(done);

  b.SetInsertPoint(done);
  auto *e = b.CreatePHI(entry->getType(), 5);
  auto *at = b.CreatePHI(b.getInt64Ty(), 5);
  auto *found = b.CreatePHI(b.getInt1Ty(), 5);
  auto add = [&](llvm::BasicBlock *from, bool f) {
    e->addIncoming(entry, from);
    at->addIncoming(idx, from);
    found->addIncoming(b.getInt1(f), from);
  };
  if (nonzero)
    add(loop, true);
  if (!claim)
    add(state_check, false);
  else
    add(claimed, true);
  add(compare, true);
  add(full, false);
  return {e, found, at};
}

namespace {

// A striped map's entry for this thread's SM.
llvm::Value *stripe_entry(DevCtx &c, const DeviceMap &dm) {
  auto &b = c.b;
  auto *sm = b.CreateZExt(c.target.special(b, Special::SmId), b.getInt64Ty());
  auto *index = b.CreateAnd(b.CreateMul(sm, b.getInt64(dm.stripe_step)),
                            b.getInt64(dm.layout.capacity - 1));
  return entry_at(c, dm, map_base(c, dm), index);
}

llvm::Value *value_ptr(DevCtx &c, const DeviceMap &dm, llvm::Value *entry, uint32_t word) {
  return byte_ptr(c, entry, 8 + dm.layout.key_size + 8 * word);
}

// Runs BODY (with the builder inside) only where COND holds.
void when(DevCtx &c, llvm::Value *cond, const std::function<void()> &body) {
  emit_if_else(c.b, c.fn, cond, body, {});
}

// Lane SRC's i64 V, as two 32-bit shuffles among MASK.
llvm::Value *shuffle64(DevCtx &c, llvm::Value *mask, llvm::Value *v, llvm::Value *src) {
  auto &b = c.b;
  auto *lo = c.target.shuffle(b, mask, b.CreateTrunc(v, b.getInt32Ty()), src);
  auto *hi = c.target.shuffle(b, mask, b.CreateTrunc(b.CreateLShr(v, 32), b.getInt32Ty()), src);
  return b.CreateOr(b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32),
                    b.CreateZExt(lo, b.getInt64Ty()));
}

// OP over V of every lane in GROUP (each of them runs this with the same GROUP): a butterfly
// when GROUP is the whole warp (5 steps), else one step per member.
llvm::Value *group_reduce(DevCtx &c, llvm::Value *group, llvm::Value *v, llvm::Value *lane,
                          const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &op,
                          llvm::Value *identity) {
  auto &b = c.b;
  auto *whole = block(c, "reduce.warp"), *pre = block(c, "reduce.group"),
       *loop = block(c, "reduce"), *out = block(c, "reduce.done");
  b.CreateCondBr(b.CreateICmpEQ(group, b.getInt32(0xffffffffu)), whole, pre);

  b.SetInsertPoint(whole);
  llvm::Value *w = v;
  for (uint32_t k : {16u, 8u, 4u, 2u, 1u})
    w = op(w, shuffle64(c, group, w, b.CreateXor(lane, b.getInt32(k))));
  b.CreateBr(out);

  b.SetInsertPoint(pre);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto *m = b.CreatePHI(b.getInt32Ty(), 2);
  auto *acc = b.CreatePHI(b.getInt64Ty(), 2);
  m->addIncoming(group, pre);
  acc->addIncoming(identity, pre);
  auto *src = b.CreateIntrinsic(llvm::Intrinsic::cttz, {b.getInt32Ty()}, {m, b.getTrue()});
  auto *acc2 = op(acc, shuffle64(c, group, v, src));
  auto *m2 = b.CreateAnd(m, b.CreateSub(m, b.getInt32(1)));
  m->addIncoming(m2, loop);
  acc->addIncoming(acc2, loop);
  b.CreateCondBr(b.CreateICmpNE(m2, b.getInt32(0)), loop, out);

  b.SetInsertPoint(out);
  auto *r = b.CreatePHI(b.getInt64Ty(), 2);
  r->addIncoming(w, whole);
  r->addIncoming(acc2, loop);
  return r;
}

} // namespace

const DeviceMap *find_map(DevCtx &c, const std::string &name) {
  auto it = c.maps->find(name);
  if (it == c.maps->end()) {
    set_error(c, "BUG: map " + name + " has no device layout");
    return nullptr;
  }
  return &it->second;
}

DVal read_map(DevCtx &c, const frontend::MapExpr &m) {
  const DeviceMap *dm = find_map(c, m.name);
  if (!dm)
    return {c.b.getInt64(0)};
  const Type &vt = dm->info->value;
  auto words = key_words(c, m, *dm);
  llvm::Value *out = is_memory_type(vt) ? local_buffer(c, vt.size) : nullptr;
  Slot s = find_slot(c, *dm, words, false);
  auto *from = c.b.GetInsertBlock();
  auto *hit = block(c, "read.hit"), *done = block(c, "read.done");
  c.b.CreateCondBr(s.found, hit, done);
  c.b.SetInsertPoint(hit);
  llvm::Value *v = nullptr;
  if (out) {
    for (uint32_t i = 0; i < (vt.size + 7) / 8; ++i)
      store_u64(c, byte_ptr(c, out, 8 * i), load_u64(c, value_ptr(c, *dm, s.entry, i)));
  } else {
    // Aggregations read as their first word (count, sum, min/max value, avg sum), as on the host.
    Type scalar = vt.is_aggregate() ? Type::integer(8, vt.is_signed) : vt;
    v = load_value(c, value_ptr(c, *dm, s.entry, 0), scalar).v;
  }
  auto *hit_end = c.b.GetInsertBlock();
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
  if (out)
    return {out};
  auto *phi = c.b.CreatePHI(c.b.getInt64Ty(), 2);
  phi->addIncoming(v, hit_end);
  phi->addIncoming(c.b.getInt64(0), from);
  return {phi};
}

void write_map(DevCtx &c, const frontend::MapExpr &m, DVal v, const Type &v_type) {
  const DeviceMap *dm = find_map(c, m.name);
  if (!dm)
    return;
  auto words = key_words(c, m, *dm);
  Slot s = find_slot(c, *dm, words, true);
  when(c, s.found,
       [&] { store_value(c, value_ptr(c, *dm, s.entry, 0), dm->info->value, v, v_type); });
}

void update_aggregate(DevCtx &c, const frontend::MapExpr &m, llvm::Value *v) {
  const DeviceMap *dm = find_map(c, m.name);
  if (!dm)
    return;
  auto &b = c.b;
  const Type &vt = dm->info->value;
  if (!v)
    v = b.getInt64(0);
  // A launch-uniform key is every lane's: computed only where its slot is not cached.
  auto cached = cached_key(c, m, *dm);
  std::vector<llvm::Value *> words;
  if (!cached)
    words = key_words(c, m, *dm);
  llvm::Value *bucket = nullptr;
  if (vt.kind == TypeKind::Hist || vt.kind == TypeKind::Lhist) {
    bucket = vt.kind == TypeKind::Hist ? hist_bucket(b, v) : lhist_bucket(b, v, vt);
    bucket =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, bucket, b.getInt64(dm->layout.buckets - 1));
  }

  // Lanes with the same key (and bucket) form a group; its lowest lane updates the map once.
  // Launch-uniform key words are every lane's: only the others (and a bucket) tell lanes apart.
  llvm::Value *mask = active_lanes(c);
  llvm::Value *group = mask;
  std::vector<llvm::Value *> match_words;
  auto varying = varying_words(m, *dm);
  for (size_t i = 0; i < words.size(); ++i)
    if (varying[i] && !dm->key_spread)
      match_words.push_back(words[i]);
  if (bucket)
    match_words.push_back(bucket);
  for (auto *w : match_words)
    group = b.CreateAnd(group, c.target.match_any(b, mask, w));
  auto warp = elect_lowest_lane(c, group);
  auto *count = b.CreateZExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, group), b.getInt64Ty());

  bool is_min = vt.kind == TypeKind::Min;
  llvm::Value *total = nullptr;
  switch (vt.kind) {
  case TypeKind::Sum:
  case TypeKind::Avg:
  case TypeKind::Stats:
    total = group_reduce(
        c, group, v, warp.lane, [&](auto *a, auto *x) { return b.CreateAdd(a, x); }, b.getInt64(0));
    break;
  case TypeKind::Min:
  case TypeKind::Max: {
    auto id = initial_word0(c, vt);
    total = group_reduce(
        c, group, v, warp.lane,
        [&](auto *a, auto *x) {
          auto *better = vt.is_signed ? (is_min ? b.CreateICmpSLT(x, a) : b.CreateICmpSGT(x, a))
                                      : (is_min ? b.CreateICmpULT(x, a) : b.CreateICmpUGT(x, a));
          return b.CreateSelect(better, x, a);
        },
        id);
    break;
  }
  default:
    break;
  }

  // A prefilled (striped) map needs no claim: the SM's entry is READY from the start.
  bool unclaimed = dm->layout.prefilled;
  when(c, warp.elected(b), [&] {
    Slot s = unclaimed ? Slot{stripe_entry(c, *dm), b.getTrue(), nullptr}
             : cached  ? cached_slot(c, *dm, *cached, vt.kind == TypeKind::Min ||
                                                          vt.kind == TypeKind::Max,
                                     [&] { return key_words(c, m, *dm); })
                       : find_slot(c, *dm, words, true, true);
    when(c, s.found, [&] {
      auto word = [&](uint32_t i) { return value_ptr(c, *dm, s.entry, i); };
      switch (vt.kind) {
      case TypeKind::Count:
        atomic_rmw(c, Op::Add, word(0), count);
        break;
      case TypeKind::Sum:
        atomic_rmw(c, Op::Add, word(0), total);
        break;
      case TypeKind::Min:
      case TypeKind::Max: {
        Op op = vt.is_signed ? (is_min ? Op::Min : Op::Max) : (is_min ? Op::UMin : Op::UMax);
        atomic_rmw(c, op, word(0), total);
        store_u64(c, word(1), b.getInt64(1));
        break;
      }
      case TypeKind::Avg:
      case TypeKind::Stats:
        atomic_rmw(c, Op::Add, word(0), total);
        atomic_rmw(c, Op::Add, word(1), count);
        break;
      case TypeKind::Hist:
      case TypeKind::Lhist:
        atomic_rmw(c, Op::Add,
                   b.CreateGEP(b.getInt8Ty(), word(0), b.CreateMul(bucket, b.getInt64(8))), count);
        break;
      default:
        set_error(c, "BUG: aggregation update on map " + m.name + " of type " + to_string(vt));
      }
    });
  });
}

} // namespace gpubt::codegen::device
