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

llvm::Value *barrier_number(DevCtx &c) {
  if (c.point.kind != abi::ProbePointKind::Barrier) {
    set_error(c, "BUG: barrier_id outside a barrier probe");
    return c.b.getInt64(0);
  }
  return c.b.CreateZExt(c.fn->getArg(kBarIndex), c.b.getInt64Ty());
}

} // namespace gpubt::codegen::device
