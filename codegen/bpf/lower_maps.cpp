// Map access and aggregation updates (see lower_maps.h). Per-CPU maps need no atomics: the
// lookup returns this CPU's copy, which we update in place.
#include "codegen/bpf/lower_maps.h"

#include <linux/bpf.h>

#include "codegen/bpf/global_counters.h"
#include "codegen/bpf/helper_errors.h"
#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/percpu_value.h"
#include "codegen/int_ops.h"

namespace gpubt::codegen::bpf {

using frontend::Type;
using frontend::TypeKind;

MapTarget find_map(LowerCtx &c, const std::string &name) {
  auto it = c.sema->maps.find(name);
  auto idx = c.maps->user.find(name);
  if (it == c.sema->maps.end() || idx == c.maps->user.end()) {
    set_error(c, "BUG: map " + name + " has no entry in the semantic map table");
    return {};
  }
  return {&it->second, idx->second};
}

uint32_t bucket_offset(const frontend::MapInfo &m) {
  return (layout::user_key_size(m) + 7) / 8 * 8;
}

llvm::Value *build_key(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t) {
  uint32_t size = layout::bpf_key_size(*t.info);
  llvm::Value *key = scratch_slot(c, size);
  zero_bytes(c, key, 8, size);
  const Type &kt = t.info->key;
  if (m.keys.size() == 1) {
    Val k = lower_expr(c, *m.keys[0]);
    store_value(c, key, 8, kt, k, m.keys[0]->type);
  } else if (m.keys.size() > 1 && kt.kind == TypeKind::Tuple) {
    auto offs = frontend::tuple_offsets(kt.elems, nullptr);
    for (size_t i = 0; i < m.keys.size() && i < kt.elems.size(); ++i) {
      Val k = lower_expr(c, *m.keys[i]);
      store_value(c, byte_ptr(c, key, offs[i]), align_at(8, offs[i]), kt.elems[i], k,
                  m.keys[i]->type);
    }
  }
  return key;
}

static llvm::Value *lookup(LowerCtx &c, int map, llvm::Value *key) {
  return call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, map), key}, c.b.getPtrTy());
}

struct Branch {
  llvm::BasicBlock *hit, *miss, *done;
};
// Branches on P being null: returns the blocks, with the builder in `hit`.
static Branch branch_on_null(LowerCtx &c, llvm::Value *p) {
  Branch br{llvm::BasicBlock::Create(c.ctx, "hit", c.fn),
            llvm::BasicBlock::Create(c.ctx, "miss", c.fn),
            llvm::BasicBlock::Create(c.ctx, "done", c.fn)};
  c.b.CreateCondBr(c.b.CreateIsNull(p), br.miss, br.hit);
  c.b.SetInsertPoint(br.hit);
  return br;
}

// An aggregation only gpu probes update, which host probes read: the tracer writes the GPU's
// values into CPU 0's slot of its BPF map (DeviceMapSpec::host_reads), so a read folds every
// CPU's slot, from whichever CPU the probe runs on.
static bool read_all_cpus(const LowerCtx &c, const MapTarget &t) {
  TypeKind k = t.info->value.kind;
  if (k != TypeKind::Count && k != TypeKind::Sum && k != TypeKind::Min && k != TypeKind::Max &&
      k != TypeKind::Avg)
    return false;
  for (const auto &d : c.spec->device.maps)
    if (d.map_index == t.index && d.host_reads)
      return true;
  return false;
}

Val read_map(LowerCtx &c, const frontend::MapExpr &m) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return {c.b.getInt64(0)};
  llvm::Value *key = build_key(c, m, t);
  const Type &vt = t.info->value;
  if (read_all_cpus(c, t))
    return {percpu_aggregate_value(c, t.index, vt, key, c.opts->num_cpus)};
  if (is_memory_type(vt)) {
    llvm::Value *out = scratch_slot(c, vt.size);
    zero_bytes(c, out, 8, vt.size);
    llvm::Value *p = lookup(c, t.index, key);
    Branch br = branch_on_null(c, p);
    copy_bytes(c, out, 8, p, 8, vt.size);
    c.b.CreateBr(br.done);
    c.b.SetInsertPoint(br.miss);
    c.b.CreateBr(br.done);
    c.b.SetInsertPoint(br.done);
    return {out, 8};
  }
  // count(), sum(), min(), max() and avg() read over every CPU, as bpftrace's head reads them
  // (0.17 read this CPU's part, and avg()'s sum).
  if (vt.kind == TypeKind::Count || vt.kind == TypeKind::Sum || vt.kind == TypeKind::Min ||
      vt.kind == TypeKind::Max || vt.kind == TypeKind::Avg)
    return {percpu_aggregate_value(c, t.index, vt, key, c.opts->num_cpus)};
  llvm::Value *p = lookup(c, t.index, key);
  check_lookup_result(c, "map_lookup_elem", p);
  Branch br = branch_on_null(c, p);
  // Other aggregations read as their first word.
  Type scalar = vt.is_aggregate() ? Type::integer(8, vt.is_signed) : vt;
  llvm::Value *loaded = load_value(c, p, 8, scalar).v;
  llvm::BasicBlock *hit_end = c.b.GetInsertBlock();
  c.b.CreateBr(br.done);
  c.b.SetInsertPoint(br.miss);
  c.b.CreateBr(br.done);
  c.b.SetInsertPoint(br.done);
  auto *phi = c.b.CreatePHI(c.b.getInt64Ty(), 2);
  phi->addIncoming(loaded, hit_end);
  phi->addIncoming(c.b.getInt64(0), br.miss);
  return {phi};
}

void count_dropped_key(LowerCtx &c, const frontend::MapExpr &m, const MapTarget &t,
                              llvm::Value *ret) {
  if (!m.keys.empty() && t.index < c.maps->ringbuf) // a word per user map (map_layout.cpp)
    count_failure(c, ret, abi::global_map_drops_slot(static_cast<uint32_t>(t.index)));
}

void write_map(LowerCtx &c, const frontend::MapExpr &m, Val v, const Type &v_type) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return;
  llvm::Value *key = build_key(c, m, t);
  uint32_t size = layout::bpf_value_size(*t.info);
  llvm::Value *val = scratch_slot(c, size);
  if (size > t.info->value.size)
    zero_bytes(c, val, 8, size);
  store_value(c, val, 8, t.info->value, v, v_type);
  auto *ret = call_helper(c, BPF_FUNC_map_update_elem,
                          {map_ref(c, t.index), key, val, c.b.getInt64(BPF_ANY)});
  count_dropped_key(c, m, t, ret);
}

llvm::Value *delete_map_entry(LowerCtx &c, const frontend::MapExpr &m) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return c.b.getInt64(0);
  llvm::Value *key = build_key(c, m, t);
  llvm::Value *ret = call_helper(c, BPF_FUNC_map_delete_elem, {map_ref(c, t.index), key});
  check_helper_result(c, HelperCheck::Level1, "map_delete_elem", ret);
  return c.b.CreateZExt(c.b.CreateICmpEQ(ret, c.b.getInt64(0)), c.b.getInt64Ty());
}

llvm::Value *map_has_key(LowerCtx &c, const frontend::MapExpr &m) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return c.b.getInt64(0);
  llvm::Value *p = lookup(c, t.index, build_key(c, m, t));
  return c.b.CreateZExt(c.b.CreateIsNotNull(p), c.b.getInt64Ty());
}

llvm::Value *map_length(LowerCtx &c, const frontend::MapExpr &m) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return c.b.getInt64(0);
  // A callback that goes on to the next element: the helper answers how many it visited. It
  // sits in the probe's section, linked as for-loops' bodies are (emit_object.cpp).
  auto *ptr = c.b.getPtrTy();
  auto *cb_ty = llvm::FunctionType::get(c.b.getInt64Ty(), {ptr, ptr, ptr, ptr}, false);
  auto *cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                    c.fn->getName() + "_len", &c.mod);
  cb->setSection(c.fn->getSection());
  cb->addFnAttr(llvm::Attribute::NoUnwind);
  cb->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> cb_b(llvm::BasicBlock::Create(c.ctx, "entry", cb));
  cb_b.CreateRet(cb_b.getInt64(0));
  auto null = llvm::ConstantPointerNull::get(ptr);
  return call_helper(c, BPF_FUNC_for_each_map_elem,
                     {map_ref(c, t.index), cb, null, c.b.getInt64(0)});
}

static llvm::Value *word(LowerCtx &c, llvm::Value *p, uint32_t i) {
  return byte_ptr(c, p, 8 * i);
}
static llvm::Value *load64(LowerCtx &c, llvm::Value *p, uint32_t i) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), word(c, p, i), llvm::Align(8));
}
static void store64(LowerCtx &c, llvm::Value *p, uint32_t i, llvm::Value *v) {
  c.b.CreateAlignedStore(v, word(c, p, i), llvm::Align(8));
}

void update_aggregate(LowerCtx &c, const frontend::MapExpr &m, llvm::Value *v) {
  MapTarget t = find_map(c, m.name);
  if (!t.info)
    return;
  const Type &vt = t.info->value;
  auto &b = c.b;
  if (!v)
    v = b.getInt64(0);
  if (vt.kind == TypeKind::Tseries)
    return update_tseries(c, m, t, v);
  llvm::Value *key = build_key(c, m, t);
  if (vt.kind == TypeKind::Hist || vt.kind == TypeKind::Lhist) {
    auto *idx = vt.kind == TypeKind::Hist ? hist_bucket(c.b, v) : lhist_bucket(c.b, v, vt);
    store64(c, byte_ptr(c, key, bucket_offset(*t.info)), 0, idx);
  }
  llvm::Value *p = lookup(c, t.index, key);
  Branch br = branch_on_null(c, p);
  llvm::Value *one = b.getInt64(1);
  switch (vt.kind) {
  case TypeKind::Count:
  case TypeKind::Hist:
  case TypeKind::Lhist:
    store64(c, p, 0, b.CreateAdd(load64(c, p, 0), one));
    break;
  case TypeKind::Sum:
    store64(c, p, 0, b.CreateAdd(load64(c, p, 0), v));
    break;
  case TypeKind::Min:
  case TypeKind::Max: {
    auto *cur = load64(c, p, 0);
    bool is_min = vt.kind == TypeKind::Min;
    llvm::Value *better = vt.is_signed ? (is_min ? b.CreateICmpSLT(v, cur) : b.CreateICmpSGT(v, cur))
                                       : (is_min ? b.CreateICmpULT(v, cur) : b.CreateICmpUGT(v, cur));
    auto *unset = b.CreateICmpEQ(load64(c, p, 1), b.getInt64(0));
    store64(c, p, 0, b.CreateSelect(b.CreateOr(unset, better), v, cur));
    store64(c, p, 1, one);
    break;
  }
  case TypeKind::Avg:
  case TypeKind::Stats:
    store64(c, p, 0, b.CreateAdd(load64(c, p, 0), v));
    store64(c, p, 1, b.CreateAdd(load64(c, p, 1), one));
    break;
  default:
    set_error(c, "BUG: aggregation update on map " + m.name + " of type " + to_string(vt));
    break;
  }
  b.CreateBr(br.done);

  b.SetInsertPoint(br.miss);
  llvm::Value *init = scratch_slot(c, 16);
  bool counts = vt.kind == TypeKind::Count || vt.kind == TypeKind::Hist ||
                vt.kind == TypeKind::Lhist;
  store64(c, init, 0, counts ? one : v);
  store64(c, init, 1, one); // is_set / count; beyond value_size for the 8-byte kinds
  auto *ret = call_helper(c, BPF_FUNC_map_update_elem,
                          {map_ref(c, t.index), key, init, b.getInt64(BPF_ANY)});
  count_dropped_key(c, m, t, ret);
  b.CreateBr(br.done);
  b.SetInsertPoint(br.done);
}

} // namespace gpubt::codegen::bpf
