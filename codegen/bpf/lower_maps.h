// Map access: keys, reads (a missing entry reads as zero), writes, deletes and the in-place
// per-CPU updates of the aggregations (count, sum, min, max, avg, stats, hist, lhist, tseries).
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

struct MapTarget {
  const frontend::MapInfo *info = nullptr;
  int index = -1;
};
MapTarget find_map(LowerCtx &c, const std::string &name);

// The BPF key of M[keys] in a zeroed scratch slot; hist/lhist leave the bucket word at 0.
llvm::Value *build_key(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t);
uint32_t bucket_offset(const frontend::MapInfo &m);

Val read_map(LowerCtx &c, const frontend::MapExpr &m);
void write_map(LowerCtx &c, const frontend::MapExpr &m, Val v, const frontend::Type &v_type);
// Both answer an i64, 1 or 0: whether the entry was there.
llvm::Value *delete_map_entry(LowerCtx &c, const frontend::MapExpr &m);
llvm::Value *map_has_key(LowerCtx &c, const frontend::MapExpr &m);
// How many keys M has: an i64 (bpf_for_each_map_elem counts them).
llvm::Value *map_length(LowerCtx &c, const frontend::MapExpr &m);

// M[keys] = AGG(v): v is the i64 argument (null for count), its signedness in is_signed.
void update_aggregate(LowerCtx &c, const frontend::MapExpr &m, llvm::Value *v);

// A keyed map that is full refuses new keys: counts RET, map_update_elem's result, for the
// warning at the end.
void count_dropped_key(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t,
                       llvm::Value *ret);

// M[keys] = tseries(v, ...) (lower_tseries.cpp).
void update_tseries(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t, llvm::Value *v);

} // namespace gpubt::codegen::bpf
