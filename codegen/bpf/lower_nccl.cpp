// NCCL communicators in BPF (see lower_nccl.h). What a communicator is learned from:
// - ncclCommInitRank/ncclCommInitRankConfig: rank and nranks are arguments; the id is a hash of
//   the 128-byte ncclUniqueId passed by value (on the stack at entry), which every rank of the
//   communicator passes, so every rank gets the same id. The handle is *comm once the call
//   returns ncclSuccess or, for a non-blocking communicator, ncclInProgress.
// - ncclCommInitAll(comms, ndev, devlist): comms[i] is rank i of ndev (at most 8 are learned).
// - ncclCommSplit(comm, color, key, newcomm, config): the new rank is decided inside NCCL (by
//   key among the ranks of one color), so rank and nranks stay -1 until the program asks
//   ncclCommUserRank/ncclCommCount, whose answers the hidden uretprobes read too; the id is
//   a hash of the parent's id and the color, the same on every rank of the new communicator.
// - each collective's outermost return (ncclSuccess/ncclInProgress: the call issued it) adds 1
//   to its communicator's count (reset where a communicator is made): lower_nccl_collective.h.
#include "codegen/bpf/lower_nccl.h"

#include <linux/bpf.h>

#include <set>
#include <string>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_nccl_collective.h"
#include "codegen/bpf/probe_maps.h"
#include "frontend/ast_walk.h"
#include "stdlib/api_types.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

constexpr uint32_t kEntries = 10240;
constexpr uint32_t kInitAllMax = 8;
// nccl_comms values: { int32 rank; int32 nranks; uint64 id; }
constexpr uint32_t kRankOff = 0, kNranksOff = 4, kIdOff = 8, kCommInfoSize = 16;
constexpr int kNcclSuccess = 0, kNcclInProgress = 7;

bool is_nccl_call(const Expr &e) {
  for (FunctionId id : {FunctionId::NcclRank, FunctionId::NcclNranks, FunctionId::NcclCommId,
                        FunctionId::NcclSeq, FunctionId::NcclNested})
    if (is_call(e, id))
      return true;
  return false;
}

bool program_uses_nccl(const Program &program) {
  bool found = false;
  for (const auto &p : program.probes)
    for_each_expr(*p, [&](const Expr &e) { found = found || is_nccl_call(e); });
  return found;
}

const stdlib::ApiFunction &function_at(uint32_t slot) { return stdlib::api_functions()[slot]; }

uint32_t slot_of(std::string_view name) {
  return static_cast<uint32_t>(stdlib::find_api_function(name) - stdlib::api_functions().data());
}

// FNV-1a over 64-bit words, folded to 32 bits: short enough to read in a map key.
llvm::Value *mix(LowerCtx &c, llvm::Value *h, llvm::Value *word) {
  return c.b.CreateMul(c.b.CreateXor(h, word), c.b.getInt64(0x100000001b3ull));
}
llvm::Value *fold(LowerCtx &c, llvm::Value *h) {
  return c.b.CreateAnd(c.b.CreateXor(h, c.b.CreateLShr(h, 32)), 0xffffffffu);
}
llvm::Value *hash_seed(LowerCtx &c) { return c.b.getInt64(0xcbf29ce484222325ull); }

llvm::Value *load_word(LowerCtx &c, llvm::Value *base, uint32_t off) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, base, off), llvm::Align(8));
}

// Four pending words per thread and tag, written at entry and read at return.
void save_pending(LowerCtx &c, uint32_t tag, std::initializer_list<llvm::Value *> words) {
  llvm::Value *v = scratch_slot(c, 32);
  zero_bytes(c, v, 8, 32);
  uint32_t off = 0;
  for (llvm::Value *w : words) {
    c.b.CreateAlignedStore(w, byte_ptr(c, v, off), llvm::Align(8));
    off += 8;
  }
  map_update(c, c.maps->nccl_pending, tid_key(c, tag), v);
}

// At return: BODY(pending words) when the call succeeded and its entry was seen.
void with_pending(LowerCtx &c, uint32_t tag, const std::function<void(llvm::Value *)> &body) {
  if_true(c, nccl_returned_ok(c), [&] {
    llvm::Value *p = map_lookup(c, c.maps->nccl_pending, tid_key(c, tag));
    if_nonnull(c, p, [&] { body(p); });
  });
}

// *OUT_PTR (a ncclComm_t the call wrote), or 0.
llvm::Value *read_handle(LowerCtx &c, llvm::Value *out_ptr) {
  llvm::Value *h = stack_i64(c);
  read_user(c, h, 8, out_ptr);
  return c.b.CreateLoad(c.b.getInt64Ty(), h);
}

void store_comm(LowerCtx &c, llvm::Value *comm, llvm::Value *rank, llvm::Value *nranks,
                llvm::Value *id) {
  if_true(c, c.b.CreateICmpNE(comm, c.b.getInt64(0)), [&] {
    llvm::Value *key = stack_i64(c);
    c.b.CreateStore(comm, key);
    llvm::Value *v = scratch_slot(c, kCommInfoSize);
    auto *i32 = c.b.getInt32Ty();
    c.b.CreateAlignedStore(c.b.CreateTrunc(rank, i32), byte_ptr(c, v, kRankOff), llvm::Align(4));
    c.b.CreateAlignedStore(c.b.CreateTrunc(nranks, i32), byte_ptr(c, v, kNranksOff),
                           llvm::Align(4));
    c.b.CreateAlignedStore(id, byte_ptr(c, v, kIdOff), llvm::Align(8));
    map_update(c, c.maps->nccl_comms, key, v);
    // A new communicator counts from 0, also at the address of one destroyed before it.
    call_helper(c, BPF_FUNC_map_delete_elem, {map_ref(c, c.maps->nccl_seq), key});
  });
}

void init_rank_entry(LowerCtx &c, uint32_t slot) {
  const auto &fn = function_at(slot);
  const stdlib::ApiParam *id = stdlib::find_api_param(fn, "commId");
  // The ncclUniqueId's words: stack slots at rsp + 8 + 8k at entry.
  uint32_t bytes = 8u * id->loc.count;
  llvm::Value *words = scratch_slot(c, bytes);
  zero_bytes(c, words, 8, bytes);
  auto *sp = ctx_word(c, stdlib::pt_regs_sp_offset);
  read_user(c, words, bytes, c.b.CreateAdd(sp, c.b.getInt64(8 + 8 * id->loc.index)));
  llvm::Value *h = hash_seed(c);
  for (uint32_t k = 0; k < id->loc.count; ++k)
    h = mix(c, h, load_word(c, words, 8 * k));
  save_pending(c, slot, {nccl_entry_arg(c, fn, "comm"), nccl_entry_arg(c, fn, "rank"),
                         nccl_entry_arg(c, fn, "nranks"), fold(c, h)});
}

void init_rank_return(LowerCtx &c, uint32_t slot) {
  with_pending(c, slot, [&](llvm::Value *p) {
    store_comm(c, read_handle(c, load_word(c, p, 0)), load_word(c, p, 8), load_word(c, p, 16),
               load_word(c, p, 24));
  });
}

void init_all_entry(LowerCtx &c, uint32_t slot) {
  const auto &fn = function_at(slot);
  save_pending(c, slot, {nccl_entry_arg(c, fn, "comm"), nccl_entry_arg(c, fn, "ndev")});
}

void init_all_return(LowerCtx &c, uint32_t slot) {
  with_pending(c, slot, [&](llvm::Value *p) {
    llvm::Value *comms = load_word(c, p, 0), *ndev = load_word(c, p, 8);
    llvm::Value *id = fold(c, mix(c, hash_seed(c), comms)); // one process: its array's address
    for (uint32_t i = 0; i < kInitAllMax; ++i)
      if_true(c, c.b.CreateICmpSLT(c.b.getInt64(i), ndev), [&] {
        llvm::Value *at = c.b.CreateAdd(comms, c.b.getInt64(8 * i));
        store_comm(c, read_handle(c, at), c.b.getInt64(i), ndev, id);
      });
  });
}

void split_entry(LowerCtx &c, uint32_t slot) {
  const auto &fn = function_at(slot);
  save_pending(c, slot, {nccl_entry_arg(c, fn, "newcomm"), nccl_entry_arg(c, fn, "comm"),
                         nccl_entry_arg(c, fn, "color")});
}

void split_return(LowerCtx &c, uint32_t slot) {
  with_pending(c, slot, [&](llvm::Value *p) {
    llvm::Value *parent = stack_i64(c), *parent_id = stack_i64(c);
    c.b.CreateStore(load_word(c, p, 8), parent);
    llvm::Value *known = map_lookup(c, c.maps->nccl_comms, parent);
    if_nonnull(c, known, [&] { c.b.CreateStore(load_word(c, known, kIdOff), parent_id); });
    llvm::Value *h = mix(c, mix(c, hash_seed(c), c.b.CreateLoad(c.b.getInt64Ty(), parent_id)),
                         load_word(c, p, 16));
    store_comm(c, read_handle(c, load_word(c, p, 0)), c.b.getInt64(-1), c.b.getInt64(-1),
               fold(c, h));
  });
}

// ncclCommUserRank(comm, &rank) / ncclCommCount(comm, &count): the answer fills in the field.
void query_entry(LowerCtx &c, uint32_t slot) {
  const auto &fn = function_at(slot);
  save_pending(c, slot, {nccl_entry_arg(c, fn, "comm"), nccl_entry_arg(c, fn, fn.params[1].name)});
}

void query_return(LowerCtx &c, uint32_t slot) {
  uint32_t field = function_at(slot).name == "ncclCommUserRank" ? kRankOff : kNranksOff;
  with_pending(c, slot, [&](llvm::Value *p) {
    llvm::Value *answer = stack_i64(c);
    read_user(c, answer, 4, load_word(c, p, 8));
    auto *v = c.b.CreateAlignedLoad(c.b.getInt32Ty(), answer, llvm::Align(8));
    llvm::Value *key = stack_i64(c);
    c.b.CreateStore(load_word(c, p, 0), key);
    llvm::Value *known = map_lookup(c, c.maps->nccl_comms, key);
    if_nonnull(c, known,
               [&] { c.b.CreateAlignedStore(v, byte_ptr(c, known, field), llvm::Align(4)); });
    if_true(c, c.b.CreateIsNull(known), [&] {
      llvm::Value *sv = c.b.CreateSExt(v, c.b.getInt64Ty());
      llvm::Value *unknown = c.b.getInt64(-1);
      store_comm(c, load_word(c, p, 0), field == kRankOff ? sv : unknown,
                 field == kRankOff ? unknown : sv, c.b.getInt64(0));
    });
  });
}

} // namespace

llvm::Value *nccl_entry_arg(LowerCtx &c, const stdlib::ApiFunction &fn, std::string_view name) {
  const stdlib::ApiParam *p = stdlib::find_api_param(fn, name);
  return lower_api_param(c, *p, stdlib::api_param_type(*p)).v;
}

llvm::Value *nccl_returned_ok(LowerCtx &c) {
  auto *ret = c.b.CreateTrunc(ctx_word(c, stdlib::pt_regs_ax_offset), c.b.getInt32Ty());
  return c.b.CreateOr(c.b.CreateICmpEQ(ret, c.b.getInt32(kNcclSuccess)),
                      c.b.CreateICmpEQ(ret, c.b.getInt32(kNcclInProgress)));
}

void add_nccl_maps(const Program &program, layout::MapLayout &layout, abi::ProgramSpec &spec) {
  if (!program_uses_nccl(program))
    return;
  layout.nccl_comms =
      push_internal_map(spec, "nccl_comms", BPF_MAP_TYPE_HASH, 8, kCommInfoSize, kEntries);
  layout.nccl_pending =
      push_internal_map(spec, "nccl_pending", BPF_MAP_TYPE_LRU_HASH, 8, 32, kEntries);
  layout.nccl_seq = push_internal_map(spec, "nccl_seq", BPF_MAP_TYPE_HASH, 8, 8, kEntries);
}

std::vector<HiddenProbe> hidden_nccl_probes(const Program &program,
                                            const layout::MapLayout &layout) {
  std::vector<HiddenProbe> out;
  if (layout.nccl_comms < 0)
    return out;
  std::set<std::string> targets;
  for (const auto &p : program.probes)
    for (const auto &ap : p->attach_points)
      if (const auto *fn = stdlib::api_function_for(ap); fn && fn->library == stdlib::ApiLibrary::Nccl)
        targets.insert(ap.target);
  if (targets.empty())
    targets.insert("nccl");
  using Lower = void (*)(LowerCtx &, uint32_t);
  auto add = [&](const std::string &target, std::string_view func, Lower entry, Lower ret) {
    for (auto [kind, lower] : {std::pair{abi::AttachKind::Uprobe, entry},
                               std::pair{abi::AttachKind::Uretprobe, ret}}) {
      HiddenProbe h;
      h.spec.kind = kind;
      h.spec.target = target;
      h.spec.func = std::string(func);
      h.spec.name = std::string(kind == abi::AttachKind::Uprobe ? "uprobe:" : "uretprobe:") +
                    target + ":" + h.spec.func;
      h.spec.hidden = true;
      h.lower = lower;
      h.slot = slot_of(func);
      out.push_back(std::move(h));
    }
  };
  for (const std::string &t : targets) {
    add(t, "ncclCommInitRank", init_rank_entry, init_rank_return);
    add(t, "ncclCommInitRankConfig", init_rank_entry, init_rank_return);
    add(t, "ncclCommInitAll", init_all_entry, init_all_return);
    add(t, "ncclCommSplit", split_entry, split_return);
    add(t, "ncclCommUserRank", query_entry, query_return);
    add(t, "ncclCommCount", query_entry, query_return);
    for (std::string_view f : nccl_collectives())
      add(t, f, nccl_collective_entry, nccl_collective_return);
  }
  return out;
}

Val lower_nccl_call(LowerCtx &c, FunctionId id, llvm::Value *comm) {
  if (c.maps->nccl_comms < 0) {
    set_error(c, "BUG: nccl_*() without the communicator maps");
    return {c.b.getInt64(0)};
  }
  if (id == FunctionId::NcclSeq)
    return {lower_nccl_seq(c, comm)};
  if (id == FunctionId::NcclNested)
    return {lower_nccl_nested(c, comm)};
  llvm::Value *key = stack_i64(c), *out = stack_i64(c);
  c.b.CreateStore(comm, key);
  c.b.CreateStore(c.b.getInt64(id == FunctionId::NcclCommId ? 0 : -1), out);
  llvm::Value *known = map_lookup(c, c.maps->nccl_comms, key);
  if_nonnull(c, known, [&] {
    llvm::Value *v =
        id == FunctionId::NcclCommId
            ? load_word(c, known, kIdOff)
            : c.b.CreateSExt(c.b.CreateAlignedLoad(
                                 c.b.getInt32Ty(),
                                 byte_ptr(c, known, id == FunctionId::NcclRank ? kRankOff
                                                                               : kNranksOff),
                                 llvm::Align(4)),
                             c.b.getInt64Ty());
    c.b.CreateStore(v, out);
  });
  return {c.b.CreateLoad(c.b.getInt64Ty(), out)};
}

} // namespace gpubt::codegen::bpf
