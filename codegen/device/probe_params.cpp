// A probe function's parameters past (userdata, pc) by its probe point, and the memory and
// barrier builtins read from them (device_context.h).
#include "codegen/device/device_context.h"

namespace gpubt::codegen::device {

namespace {

constexpr unsigned kPtr = 2, kSize = 3, kMemoryFlags = 4; // a memory access's parameters
constexpr unsigned kBarIndex = 2;                         // a barrier's

bool at_memory(DevCtx &c, const char *builtin) {
  if (c.point.kind == abi::ProbePointKind::MemoryAccess)
    return true;
  set_error(c, std::string("BUG: ") + builtin + " outside a memory probe");
  return false;
}

llvm::Value *flags(DevCtx &c) { return c.fn->getArg(kMemoryFlags); }

// The access's space bit (abi::AccessGlobal, ...), i32: the flags' space moved down to it.
llvm::Value *space_bit(DevCtx &c) {
  static_assert(abi::FlagGlobal >> 5 == abi::AccessGlobal &&
                abi::FlagLocal >> 5 == abi::AccessLocal);
  return c.b.CreateAnd(c.b.CreateLShr(flags(c), 5), abi::AccessSpaces);
}

// The access's kind bit (abi::AccessRead, Write or Atomic), i32: the Sanitizer flags an atomic
// as a read and a write (ATOMSYS for a system-scope one).
llvm::Value *kind_bit(DevCtx &c) {
  auto &b = c.b;
  auto *f = flags(c);
  auto *rw = b.CreateAnd(f, abi::FlagRead | abi::FlagWrite);
  auto *atomic = b.CreateOr(b.CreateICmpNE(b.CreateAnd(f, abi::FlagAtomSys), b.getInt32(0)),
                            b.CreateICmpEQ(rw, b.getInt32(abi::FlagRead | abi::FlagWrite)));
  auto *write = b.CreateICmpNE(b.CreateAnd(f, abi::FlagWrite), b.getInt32(0));
  return b.CreateSelect(
      atomic, b.getInt32(abi::AccessAtomic),
      b.CreateSelect(write, b.getInt32(abi::AccessWrite), b.getInt32(abi::AccessRead)));
}

// An 8-byte string holding WORDS[i] where BITS[i] equals BIT (the last one otherwise).
llvm::Value *word_of(DevCtx &c, llvm::Value *bit, std::initializer_list<uint32_t> bits,
                     std::initializer_list<const char *> words) {
  auto &b = c.b;
  auto packed = [&](const char *w) {
    uint64_t v = 0;
    for (size_t i = 0; w[i] && i < 7; ++i)
      v |= uint64_t(uint8_t(w[i])) << (8 * i);
    return b.getInt64(v);
  };
  llvm::Value *v = packed(*(words.end() - 1));
  auto w = words.begin();
  for (auto it = bits.begin(); it + 1 < bits.end(); ++it, ++w)
    v = b.CreateSelect(b.CreateICmpEQ(bit, b.getInt32(*it)), packed(*w), v);
  auto *buf = local_buffer(c, 8);
  store_u64(c, buf, v);
  return buf;
}

} // namespace

llvm::FunctionType *probe_function_type(DevCtx &c) {
  auto *base = c.target.probe_type(c.ctx);
  std::vector<llvm::Type *> params(base->param_begin(), base->param_end());
  auto *i32 = llvm::Type::getInt32Ty(c.ctx);
  auto *ptr = llvm::PointerType::get(c.ctx, 0);
  if (c.point.kind == abi::ProbePointKind::MemoryAccess)
    params.insert(params.end(), {ptr, i32, i32, ptr});
  else if (c.point.kind == abi::ProbePointKind::Barrier)
    params.insert(params.end(), {i32, i32, i32});
  return llvm::FunctionType::get(base->getReturnType(), params, false);
}

void skip_other_accesses(DevCtx &c, llvm::BasicBlock *skip) {
  uint32_t kinds = c.point.access & abi::AccessKinds, spaces = c.point.access & abi::AccessSpaces;
  if (c.point.kind != abi::ProbePointKind::MemoryAccess || (!kinds && !spaces))
    return;
  auto &b = c.b;
  llvm::Value *ok = b.getTrue();
  if (kinds)
    ok = b.CreateAnd(ok, b.CreateICmpNE(b.CreateAnd(kind_bit(c), kinds), b.getInt32(0)));
  if (spaces)
    ok = b.CreateAnd(ok, b.CreateICmpNE(b.CreateAnd(space_bit(c), spaces), b.getInt32(0)));
  auto *run = llvm::BasicBlock::Create(c.ctx, "access.match", c.fn);
  b.CreateCondBr(ok, run, skip);
  b.SetInsertPoint(run);
}

llvm::Value *access_address(DevCtx &c) {
  if (!at_memory(c, "addr"))
    return c.b.getInt64(0);
  auto &b = c.b;
  auto *ptr = b.CreatePtrToInt(c.fn->getArg(kPtr), b.getInt64Ty());
  auto *shared = c.target.window_address(b, ptr, true);
  auto *local = c.target.window_address(b, ptr, false);
  if (!shared || !local) {
    set_error(c, "addr: the " + c.target.name() + " target has no shared or local windows");
    return ptr;
  }
  auto *space = space_bit(c);
  return b.CreateSelect(
      b.CreateICmpEQ(space, b.getInt32(abi::AccessShared)), shared,
      b.CreateSelect(b.CreateICmpEQ(space, b.getInt32(abi::AccessLocal)), local, ptr));
}

llvm::Value *access_bytes(DevCtx &c) {
  if (!at_memory(c, "access_size"))
    return c.b.getInt64(0);
  return c.b.CreateZExt(c.fn->getArg(kSize), c.b.getInt64Ty());
}

llvm::Value *access_word(DevCtx &c) {
  if (!at_memory(c, "access"))
    return local_buffer(c, 8);
  return word_of(c, kind_bit(c), {abi::AccessAtomic, abi::AccessWrite, abi::AccessRead},
                 {"atomic", "store", "load"});
}

llvm::Value *space_word(DevCtx &c) {
  if (!at_memory(c, "space"))
    return local_buffer(c, 8);
  return word_of(c, space_bit(c), {abi::AccessShared, abi::AccessLocal, abi::AccessGlobal},
                 {"shared", "local", "global"});
}

// The lanes making this access together each find the lanes sharing their sector (match.any);
// the lowest of each group stands for its sector, and the ballot of those counts them.
llvm::Value *access_sectors(DevCtx &c) {
  if (!at_memory(c, "sectors"))
    return c.b.getInt64(0);
  auto &b = c.b;
  auto *mask = active_lanes(c);
  auto *sector = b.CreateLShr(access_address(c), 5);
  auto same = elect_lowest_lane(c, c.target.match_any(b, mask, sector));
  auto *leaders = c.target.ballot(b, mask, same.elected(b));
  if (!leaders) {
    set_error(c, "sectors: the " + c.target.name() + " target has no warp ballot");
    return b.getInt64(0);
  }
  return b.CreateZExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, leaders), b.getInt64Ty());
}

// Shared-memory bank conflicts as Nsight Compute counts them
// (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum): the wavefronts the request needs
// past one per phase. An access of S = 4 bytes (1 and 2 count as 4) is one phase of 32 lanes
// over 32 banks of 4 bytes; S = 8 is two phases of 16 lanes (lanes 0-15, 16-31) and S >= 16 four
// of 8, each over 128 bytes in units of S bytes (bank group = (addr / S) % (128 / S)). In each
// phase, the lanes reading one unit share it (broadcast), and the phase takes as many wavefronts as
// the most distinct units any one bank group gets. The window offset (the probe's ptr for a shared
// access) has the address's banks. Lanes of another space (a generic access) count nothing; the
// value is the same in every lane.
llvm::Value *access_bank_conflicts(DevCtx &c) {
  if (!at_memory(c, "bank_conflicts"))
    return c.b.getInt64(0);
  auto &b = c.b;
  auto *i64 = b.getInt64Ty();
  auto *mask = active_lanes(c);
  auto ballot = [&](llvm::Value *pred) { return c.target.ballot(b, mask, pred); };
  auto *shared_lanes = ballot(b.CreateICmpEQ(space_bit(c), b.getInt32(abi::AccessShared)));
  if (!shared_lanes) {
    set_error(c, "bank_conflicts: the " + c.target.name() + " target has no warp ballot");
    return b.getInt64(0);
  }
  auto *lane = b.CreateTrunc(c.target.mask_lane(b), b.getInt32Ty());
  auto *shared =
      b.CreateICmpNE(b.CreateAnd(shared_lanes, b.CreateShl(b.getInt32(1), lane)), b.getInt32(0));
  auto *size = c.fn->getArg(kSize);
  auto *shift = b.CreateSelect(
      b.CreateICmpUGE(size, b.getInt32(16)), b.getInt32(4),
      b.CreateSelect(b.CreateICmpUGE(size, b.getInt32(8)), b.getInt32(3), b.getInt32(2)));
  auto *width = b.CreateSub(b.getInt32(7), shift); // log2 of the lanes (and banks) per phase
  auto *phase = b.CreateLShr(lane, width);
  auto *unit = b.CreateLShr(b.CreatePtrToInt(c.fn->getArg(kPtr), i64), b.CreateZExt(shift, i64));
  auto *group = b.CreateAnd(
      unit, b.CreateZExt(b.CreateSub(b.CreateShl(b.getInt32(1), width), b.getInt32(1)), i64));
  // Keys differ by phase and by space: lanes of two phases, or a shared and a global lane,
  // never share a unit or a bank group.
  auto *tag =
      b.CreateZExt(b.CreateOr(b.CreateShl(phase, 1), b.CreateZExt(shared, b.getInt32Ty())), i64);
  auto key = [&](llvm::Value *v) { return b.CreateOr(b.CreateShl(v, 3), tag); };
  auto same_unit = elect_lowest_lane(c, c.target.match_any(b, mask, key(unit)));
  auto *firsts = ballot(b.CreateAnd(same_unit.elected(b), shared));
  auto *same_group = c.target.match_any(b, mask, key(group));
  // The distinct units of this lane's bank group (0 outside shared memory).
  auto *units = b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, b.CreateAnd(same_group, firsts));
  // This lane's phase as a lane mask: 2^per_phase - 1 moved to the phase's first lane (in i64:
  // one phase of 32 lanes is all ones).
  auto *per_phase = b.CreateZExt(b.CreateShl(b.getInt32(1), width), i64);
  auto *phase_bits = b.CreateSub(b.CreateShl(b.getInt64(1), per_phase), b.getInt64(1));
  auto *phase_lanes = b.CreateTrunc(
      b.CreateShl(phase_bits, b.CreateZExt(b.CreateShl(phase, width), i64)), b.getInt32Ty());
  // The phase's wavefronts, the most units of any of its groups (at most 32): a ballot per bit,
  // highest first, keeps a bit where some lane of the phase has at least the value so far.
  llvm::Value *most = b.getInt32(0);
  for (int bit = 5; bit >= 0; --bit) {
    auto *want = b.CreateOr(most, b.getInt32(1u << bit));
    auto *some = b.CreateICmpNE(b.CreateAnd(ballot(b.CreateICmpUGE(units, want)), phase_lanes),
                                b.getInt32(0));
    most = b.CreateSelect(some, want, most);
  }
  // Summed over the phases: each phase's lowest shared lane holds its extra wavefronts (< 32),
  // and a ballot per bit adds them up.
  auto *leader = b.CreateICmpEQ(
      lane, b.CreateIntrinsic(llvm::Intrinsic::cttz, {b.getInt32Ty()},
                              {b.CreateAnd(shared_lanes, phase_lanes), b.getFalse()}));
  auto *extra = b.CreateSelect(leader, b.CreateSub(most, b.getInt32(1)), b.getInt32(0));
  llvm::Value *total = b.getInt32(0);
  for (int bit = 0; bit < 5; ++bit) {
    auto *set = b.CreateICmpNE(b.CreateAnd(extra, b.getInt32(1u << bit)), b.getInt32(0));
    auto *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, ballot(set));
    total = b.CreateAdd(total, b.CreateShl(n, bit));
  }
  return b.CreateZExt(total, i64);
}

llvm::Value *barrier_number(DevCtx &c) {
  if (c.point.kind != abi::ProbePointKind::Barrier) {
    set_error(c, "BUG: barrier_id outside a barrier probe");
    return c.b.getInt64(0);
  }
  return c.b.CreateZExt(c.fn->getArg(kBarIndex), c.b.getInt64Ty());
}

} // namespace gpubt::codegen::device
