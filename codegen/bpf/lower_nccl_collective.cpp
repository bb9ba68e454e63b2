// NCCL collectives in BPF (see lower_nccl_collective.h). One record per thread in nccl_pending:
// { u64 comm; u64 seq; u64 sp; u64 state = function slot << 1 | open }, written at the entry of
// the thread's outermost collective and closed at its return. A call is inside it ("nested") when
// the record is open, on the same communicator, and the call's frame lies below the outer one:
// its entry sp is lower (a call pushed a return address), or equal for another function (a tail
// call: `jmp ncclBroadcast`). On x86-64 a uretprobe sees the entry's sp + 8 (ret popped the
// address), so the outermost return is the one at the record's sp + 8. A record whose call never
// returned (a missed uretprobe) is replaced by the next call that is not below it, so one lost
// return cannot make later calls look nested.
#include "codegen/bpf/lower_nccl_collective.h"

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_nccl.h"
#include "codegen/bpf/probe_maps.h"
#include "stdlib/api_types.h"

namespace gpubt::codegen::bpf {

namespace {

constexpr uint32_t kCollectiveTag = 0x10000; // nccl_pending key of the record: one per thread
constexpr uint32_t kComm = 0, kSeq = 8, kSp = 16, kState = 24, kRecordSize = 32;
constexpr uint64_t kReturnPop = 8; // x86-64: sp at a uretprobe is the entry's sp + 8

llvm::Value *word(LowerCtx &c, llvm::Value *base, uint32_t off) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, base, off), llvm::Align(8));
}

llvm::Value *current_sp(LowerCtx &c) { return ctx_word(c, stdlib::pt_regs_sp_offset); }

llvm::Value *record(LowerCtx &c) {
  return map_lookup(c, c.maps->nccl_pending, tid_key(c, kCollectiveTag));
}

// How many collectives COMM has issued (0 if none yet).
llvm::Value *issued(LowerCtx &c, llvm::Value *comm) {
  llvm::Value *key = stack_i64(c), *out = stack_i64(c);
  c.b.CreateStore(comm, key);
  llvm::Value *n = map_lookup(c, c.maps->nccl_seq, key);
  if_nonnull(c, n, [&] { c.b.CreateStore(word(c, n, 0), out); });
  return c.b.CreateLoad(c.b.getInt64Ty(), out);
}

llvm::Value *is_open(LowerCtx &c, llvm::Value *rec) {
  return c.b.CreateICmpNE(c.b.CreateAnd(word(c, rec, kState), 1), c.b.getInt64(0));
}

llvm::Value *other_function(LowerCtx &c, llvm::Value *rec, uint32_t slot) {
  return c.b.CreateICmpNE(c.b.CreateLShr(word(c, rec, kState), 1), c.b.getInt64(slot));
}

// At the entry of collective SLOT on COMM: the open record REC (non-null) is of a call this one
// runs inside.
llvm::Value *nested_at_entry(LowerCtx &c, llvm::Value *rec, llvm::Value *comm, uint32_t slot) {
  llvm::Value *outer_sp = word(c, rec, kSp), *sp = current_sp(c);
  llvm::Value *below = c.b.CreateOr(
      c.b.CreateICmpUGT(outer_sp, sp),
      c.b.CreateAnd(c.b.CreateICmpEQ(outer_sp, sp), other_function(c, rec, slot)));
  return c.b.CreateAnd(c.b.CreateAnd(is_open(c, rec), c.b.CreateICmpEQ(word(c, rec, kComm), comm)),
                       below);
}

// At the return of collective SLOT on COMM: REC (non-null) is of a call this one ran inside.
// Inner calls return before the outer one closes the record; a tail-called inner one returns
// with it (both at the outer's sp + 8), before or after its record was closed.
llvm::Value *nested_at_return(LowerCtx &c, llvm::Value *rec, llvm::Value *comm, uint32_t slot) {
  llvm::Value *outer_ret = c.b.CreateAdd(word(c, rec, kSp), c.b.getInt64(kReturnPop));
  llvm::Value *sp = current_sp(c);
  llvm::Value *inner = c.b.CreateAnd(is_open(c, rec), c.b.CreateICmpUGT(outer_ret, sp));
  llvm::Value *tail =
      c.b.CreateAnd(c.b.CreateICmpEQ(outer_ret, sp), other_function(c, rec, slot));
  return c.b.CreateAnd(c.b.CreateICmpEQ(word(c, rec, kComm), comm), c.b.CreateOr(inner, tail));
}

// The collective function being probed (uprobe or uretprobe), or null.
const stdlib::ApiFunction *probed_collective(const LowerCtx &c) {
  if (!c.ap || (c.ap->provider != frontend::Provider::Uprobe &&
                c.ap->provider != frontend::Provider::Uretprobe))
    return nullptr;
  const stdlib::ApiFunction *fn = stdlib::api_function_for(*c.ap);
  bool ok = fn && fn->library == stdlib::ApiLibrary::Nccl && nccl_collectives().count(fn->name);
  return ok ? fn : nullptr;
}

uint32_t slot_of(const stdlib::ApiFunction &fn) {
  return static_cast<uint32_t>(&fn - stdlib::api_functions().data());
}

} // namespace

const std::set<std::string_view> &nccl_collectives() {
  static const std::set<std::string_view> names = {
      "ncclAllReduce", "ncclReduce",  "ncclBcast",   "ncclBroadcast", "ncclReduceScatter",
      "ncclAllGather", "ncclAlltoAll", "ncclGather", "ncclScatter"};
  return names;
}

void nccl_collective_entry(LowerCtx &c, uint32_t slot) {
  llvm::Value *comm = nccl_entry_arg(c, stdlib::api_functions()[slot], "comm");
  llvm::Value *nested = stack_i64(c);
  c.b.CreateStore(c.b.getInt64(0), nested);
  llvm::Value *rec = record(c);
  if_nonnull(c, rec, [&] {
    c.b.CreateStore(c.b.CreateZExt(nested_at_entry(c, rec, comm, slot), c.b.getInt64Ty()), nested);
  });
  if_true(c, c.b.CreateICmpEQ(c.b.CreateLoad(c.b.getInt64Ty(), nested), c.b.getInt64(0)), [&] {
    llvm::Value *v = scratch_slot(c, kRecordSize);
    c.b.CreateAlignedStore(comm, byte_ptr(c, v, kComm), llvm::Align(8));
    c.b.CreateAlignedStore(issued(c, comm), byte_ptr(c, v, kSeq), llvm::Align(8));
    c.b.CreateAlignedStore(current_sp(c), byte_ptr(c, v, kSp), llvm::Align(8));
    c.b.CreateAlignedStore(c.b.getInt64((uint64_t{slot} << 1) | 1), byte_ptr(c, v, kState),
                           llvm::Align(8));
    map_update(c, c.maps->nccl_pending, tid_key(c, kCollectiveTag), v);
  });
}

void nccl_collective_return(LowerCtx &c, uint32_t) {
  llvm::Value *rec = record(c);
  if_nonnull(c, rec, [&] {
    llvm::Value *outer_ret = c.b.CreateAdd(word(c, rec, kSp), c.b.getInt64(kReturnPop));
    // The outermost call returns (or one whose record was left open, from further up).
    llvm::Value *closes = c.b.CreateAnd(is_open(c, rec), c.b.CreateICmpUGE(current_sp(c), outer_ret));
    if_true(c, closes, [&] {
      llvm::Value *state = byte_ptr(c, rec, kState);
      c.b.CreateAlignedStore(c.b.CreateAnd(word(c, rec, kState), ~uint64_t{1}), state,
                             llvm::Align(8));
      if_true(c, nccl_returned_ok(c), [&] {
        llvm::Value *key = stack_i64(c);
        c.b.CreateStore(word(c, rec, kComm), key);
        llvm::Value *n = map_lookup(c, c.maps->nccl_seq, key);
        if_nonnull(c, n, [&] {
          c.b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, n, c.b.getInt64(1), llvm::MaybeAlign(8),
                              llvm::AtomicOrdering::Monotonic);
        });
        if_true(c, c.b.CreateIsNull(n), [&] {
          llvm::Value *one = stack_i64(c);
          c.b.CreateStore(c.b.getInt64(1), one);
          map_update(c, c.maps->nccl_seq, key, one);
        });
      });
    });
  });
}

llvm::Value *lower_nccl_seq(LowerCtx &c, llvm::Value *comm) {
  llvm::Value *out = stack_i64(c);
  c.b.CreateStore(issued(c, comm), out);
  // In a collective's uretprobe the count may already include it: its number is the record's
  // (this call's, or the outer call's it ran inside). At entry the count is the number.
  if (c.ap && c.ap->provider == frontend::Provider::Uretprobe && probed_collective(c)) {
    llvm::Value *rec = record(c);
    if_nonnull(c, rec, [&] {
      if_true(c, c.b.CreateICmpEQ(word(c, rec, kComm), comm),
              [&] { c.b.CreateStore(word(c, rec, kSeq), out); });
    });
  }
  return c.b.CreateLoad(c.b.getInt64Ty(), out);
}

llvm::Value *lower_nccl_nested(LowerCtx &c, llvm::Value *comm) {
  llvm::Value *out = stack_i64(c);
  c.b.CreateStore(c.b.getInt64(0), out);
  const stdlib::ApiFunction *fn = probed_collective(c);
  if (!fn)
    return c.b.CreateLoad(c.b.getInt64Ty(), out); // outside a collective's probe: 0
  bool at_entry = c.ap->provider == frontend::Provider::Uprobe;
  llvm::Value *rec = record(c);
  if_nonnull(c, rec, [&] {
    llvm::Value *n = at_entry ? nested_at_entry(c, rec, comm, slot_of(*fn))
                              : nested_at_return(c, rec, comm, slot_of(*fn));
    c.b.CreateStore(c.b.CreateZExt(n, c.b.getInt64Ty()), out);
  });
  return c.b.CreateLoad(c.b.getInt64Ty(), out);
}

} // namespace gpubt::codegen::bpf
