// The state of lowering one gpu probe into a patch function, the device side of the lowering
// core's hooks (codegen/common/lowering.h), and the IR helpers the device lowering files share
// (memory values, device atomics, the map table).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/common/lowering.h"
#include "codegen/device_target.h"
#include "codegen/layout/device_map_layout.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::codegen::device {

using layout::DeviceMap;

// Strings and tuples are a generic pointer to type.size bytes (8-aligned).
using DVal = codegen::Value;

struct DevCtx : codegen::Lowering {
  DevCtx(llvm::Module &m, const DeviceTarget &t) : Lowering(m), target(t) {}
  const DeviceTarget &target;
  llvm::Value *userdata = nullptr; // struct gpubt_device_ctx *, in the global address space
  abi::ProbePoint point;           // where the probe runs: its function's parameters after (ud, pc)

  uint32_t probe_name_index = 0; // into ProgramSpec::probe_names (the `probe` builtin)
  abi::ProgramSpec *spec = nullptr;
  const std::map<std::string, DeviceMap> *maps = nullptr;
  llvm::Value *last_thread = nullptr; // i64 0/1, counted once at the probe's start if used
  // --timeline: the clock the launch's last thread read for its launch record (0 elsewhere); that
  // thread's `nsecs` is this same reading, so the record's span is what the script measures.
  llvm::Value *launch_end_ns = nullptr;
  // gpubt_device_ctx::slot_cache words given out so far, shared by the probes of one module
  // (null: none to give, no update caches its slot).
  uint32_t *slot_cache_used = nullptr;
  // Warp-wide values of the lanes that came to the probe together, read as it starts (before
  // its predicate, or a block probe's choice of one lane, narrows them); null: not used.
  struct Request {
    llvm::Value *lanes = nullptr;          // `active_lanes` (i32)
    llvm::Value *sectors = nullptr;        // i64
    llvm::Value *bank_conflicts = nullptr; // i64
  } request;
  // The lanes that came into the probe function together (its exit syncs them); null on targets
  // whose lanes run in lockstep.
  llvm::Value *came_lanes = nullptr;
  // gpu:block_begin / gpu:block_end: lower_block_edge runs the body only in the block's first
  // thread in / last thread out.
  frontend::Provider provider = frontend::Provider::GpuKprobe;

protected: // device_expr.cpp; values live in local memory (local_buffer)
  bool holds_in_memory(const frontend::Type &t) const override;
  llvm::Value *temp_buffer(uint32_t size, bool zeroed) override;
  llvm::Value *variable_slot(const frontend::Type &t) override;
  DVal load(llvm::Value *ptr, uint32_t align, const frontend::Type &t) override;
  void store(llvm::Value *dst, uint32_t align, const frontend::Type &dst_t, DVal src,
             const frontend::Type &src_t) override;
  DVal string_value(const frontend::StringExpr &e) override;
  DVal map_read(const frontend::MapExpr &m) override;
  void map_write(const frontend::MapExpr &m, DVal v, const frontend::Type &v_type) override;
  bool map_aggregate(const frontend::MapExpr &m, const frontend::CallExpr &call) override;
  DVal builtin_value(const frontend::BuiltinExpr &e) override;
  DVal call_value(const frontend::CallExpr &e) override;
  // Not in gpu probes: *p, a[i], fields but a tuple's, operators on strings, for over a map.
  DVal deref_value(const frontend::UnaryExpr &e) override;
  DVal address_of(const frontend::UnaryExpr &e) override;
  DVal index_value(const frontend::IndexExpr &e) override;
  DVal field_value(const frontend::FieldExpr &e) override;
  std::optional<DVal> memory_compare(const frontend::BinaryExpr &e, DVal l, DVal r) override;
  std::string operator_error(const frontend::BinaryExpr &e) override;
  void lower_while(const frontend::WhileStmt &s) override;
};

inline void set_error(DevCtx &c, std::string msg) { c.set_error(std::move(msg)); }
bool is_memory_type(const frontend::Type &t); // String, Tuple

// An alloca in the entry block, zeroed there; SIZE bytes, 8-aligned.
llvm::Value *local_buffer(DevCtx &c, uint32_t size);
inline llvm::Value *byte_ptr(DevCtx &c, llvm::Value *base, uint64_t offset) {
  return c.byte_ptr(base, offset);
}
llvm::Value *load_u64(DevCtx &c, llvm::Value *p);
void store_u64(DevCtx &c, llvm::Value *p, llvm::Value *v);
// A field of the per-launch context, zero-extended to i64.
llvm::Value *ctx_field(DevCtx &c, uint32_t offset, uint32_t size);
// A device address held in memory as a uint64, as a pointer in the global address space.
llvm::Value *global_ptr(DevCtx &c, llvm::Value *address);

// Value of type SRC_T stored as DST_T at DST + OFFSET (DST aligned to DST_ALIGN): integers
// resized, strings cut or NUL-padded, tuples element by element.
void store_value(DevCtx &c, llvm::Value *dst, const frontend::Type &dst_t, DVal src,
                 const frontend::Type &src_t, uint32_t offset = 0, uint32_t dst_align = 8);
DVal load_value(DevCtx &c, llvm::Value *ptr, const frontend::Type &t);

// Device-scope atomics (atom.*.gpu / ld.acquire.gpu / st.release.gpu).
// ORDER: relaxed (map updates), or AcquireRelease where the result orders other memory.
llvm::Value *atomic_rmw(DevCtx &c, llvm::AtomicRMWInst::BinOp op, llvm::Value *p, llvm::Value *v,
                        llvm::AtomicOrdering order = llvm::AtomicOrdering::Monotonic);
llvm::Value *load_relaxed(DevCtx &c, llvm::Value *p); // a u64 other SMs update: no stale L1
// A u64 that may be stale (an L1 hit): a hint whose every value, 0 included, is safe to act on.
llvm::Value *load_hint(DevCtx &c, llvm::Value *p);
void store_relaxed(DevCtx &c, llvm::Value *p, llvm::Value *v);
llvm::Value *load_acquire(DevCtx &c, llvm::Value *p);
void store_release(DevCtx &c, llvm::Value *p, llvm::Value *v);
// {old, success}
std::pair<llvm::Value *, llvm::Value *> compare_exchange(DevCtx &c, llvm::Value *p,
                                                         llvm::Value *expected, llvm::Value *v);

// A warp's lowest lane of LANES (an i32 lane mask) acts for them all: one atomic per warp, not
// per thread. `lane` is this thread's index in the mask, `leader` the lowest set bit's (i32);
// elected() compares them where the caller branches, after what it computes from the two.
struct WarpElection {
  llvm::Value *lane;
  llvm::Value *leader;
  llvm::Value *elected(llvm::IRBuilder<> &b) const { return b.CreateICmpEQ(lane, leader); }
};
WarpElection elect_lowest_lane(DevCtx &c, llvm::Value *lanes);
llvm::Value *active_lanes(DevCtx &c); // the warp's active lanes, an i32 mask

inline DVal lower_expr(DevCtx &c, const frontend::Expr &e) { return c.lower_expr(e); }
inline llvm::Value *truthy(DevCtx &c, DVal v) { return c.truthy(v); }

// probe_params.cpp: the probe function's parameters past (userdata, pc), by point: a memory
// access's (ptr, accessSize, flags, pData) and a barrier's (barIndex, threadCount, flags), the
// Compute Sanitizer's callbacks' (runtime/abi/probe_point.h); the PTX inserter passes the same.
llvm::FunctionType *probe_function_type(DevCtx &c);
// A memory probe runs only at the kinds and spaces its point names: the Sanitizer patches every
// access of an instruction kind. Branches to SKIP when this access is not one of them.
void skip_other_accesses(DevCtx &c, llvm::BasicBlock *skip);
// The memory probes' builtins from those parameters (a BUG error at another point).
llvm::Value *access_address(DevCtx &c); // addr: a generic address, i64
llvm::Value *access_bytes(DevCtx &c);   // access_size, i64
llvm::Value *access_word(DevCtx &c);    // access: "load", "store", "atomic" (an 8-byte string)
llvm::Value *space_word(DevCtx &c);     // space: "global", "shared", "local"
llvm::Value *access_sectors(DevCtx &c); // sectors, i64
llvm::Value *access_bank_conflicts(DevCtx &c); // bank_conflicts, i64
llvm::Value *barrier_number(DevCtx &c); // barrier_id, i64

// device_expr.cpp
llvm::Value *linear_block(DevCtx &c);      // the block's index in the grid, x fastest (i64)
llvm::Value *threads_per_block(DevCtx &c); // i64
llvm::Value *device_nsecs(DevCtx &c); // `nsecs`: %globaltimer on the host's clock
llvm::Value *probe_nsecs(DevCtx &c);  // `nsecs` in a probe body (see launch_end_ns)

// device_maps.cpp
const DeviceMap *find_map(DevCtx &c, const std::string &name);
llvm::Value *map_base(DevCtx &c, const DeviceMap &dm); // its table (global pointer)
// Entry INDEX (i64) of DM's table at BASE: its state word.
llvm::Value *entry_at(DevCtx &c, const DeviceMap &dm, llvm::Value *base, llvm::Value *index);
struct Slot {
  llvm::Value *entry; // the entry's state word (global pointer), valid where found
  llvm::Value *found; // i1
  llvm::Value *index; // i64, the entry's index, valid where found
};
// Finds the entry of the key of WORDS; with CLAIM, claims an empty slot for it (dropping when
// none is free). FOR_UPDATE: the caller only adds to the entry's value atomically (not a read,
// a plain write or a min/max). Leaves the builder in a block after the search. REMAKE (a key
// that is the same wherever it is made, a launch-uniform one): the words made again inside the
// search loop, so they need no registers across it.
Slot find_slot(DevCtx &c, const DeviceMap &dm, const std::vector<llvm::Value *> &words,
               bool claim, bool for_update = false,
               const std::function<std::vector<llvm::Value *>()> &remake = {});
DVal read_map(DevCtx &c, const frontend::MapExpr &m);
void write_map(DevCtx &c, const frontend::MapExpr &m, DVal v, const frontend::Type &v_type);
// M[keys] = AGG(v), aggregated across the warp first (v null for count).
void update_aggregate(DevCtx &c, const frontend::MapExpr &m, llvm::Value *v);

// slot_cache.cpp: an update site whose key is launch-uniform, and its slot cache words.
struct CachedKey {
  uint32_t first = 0; // gpubt_device_ctx::slot_cache[first, first + ways)
  uint32_t ways = 1;  // one per place the key spreads over (by SM), a power of two
  const frontend::BuiltinExpr *launch_value = nullptr; // the grid/block size in the key, if any
};
// Gives the update of M (a keyed aggregation) its words when it can have a cache.
std::optional<CachedKey> cached_key(DevCtx &c, const frontend::MapExpr &m, const DeviceMap &dm);
// The key's entry from the cache, else found (and claimed) with KEY_WORDS() and cached.
// ACQUIRE: the update also needs the claimer's start value (min/max). Slot::index is unset.
Slot cached_slot(DevCtx &c, const DeviceMap &dm, const CachedKey &k, bool acquire,
                 const std::function<std::vector<llvm::Value *>()> &key_words);
// block_state.cpp: gpu:block_begin / gpu:block_end (device_abi.h block_slots). i1: this thread
// is its block's first in (it claimed the block's word) / last out (it freed it). Every thread
// of a traced kernel runs both, once each.
llvm::Value *enter_block(DevCtx &c);
llvm::Value *leave_block(DevCtx &c);

// device_printf.cpp
void lower_printf(DevCtx &c, const frontend::CallExpr &call);
// --timeline: the launch's GpuLaunchRecord (launch_start to END_NS, the end as the last thread
// read it; null: now), from its last thread.
void send_launch_record(DevCtx &c, llvm::Value *end_ns = nullptr);

} // namespace gpubt::codegen::device
