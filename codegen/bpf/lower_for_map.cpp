// for ($kv : @map) { body } in host probes: bpf_for_each_map_elem(map, callback, ctx, 0), the
// body in CALLBACK(map, key, value, ctx), a BPF subprogram placed in the probe's own section
// (extract_sections links the call; the loader adds the BTF func_info the kernel wants).
// CTX is an array on the probe's stack: the program's context, its scratch area, the saved API
// arguments, a flag `return` sets, then a pointer to each of the probe's variables, so the body
// reads and writes the probe's own variables (bpftrace passes them the same way). `continue`
// returns 0 (next element), `break` returns 1 (stop), `return` sets the flag and returns 1, and
// the probe (or the callback around) returns when it finds the flag set.
#include <linux/bpf.h>

#include <set>
#include <string>

#include "frontend/ast_walk.h"

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_context.h"
#include "codegen/bpf/lower_maps.h"
#include "codegen/bpf/percpu_value.h"

namespace gpubt::codegen::bpf {

using frontend::Type;

namespace {

// (key, value) from the element's pointers into $kv's slot. An aggregation's value is its
// value over all CPUs (the callback is handed this CPU's part only), as bpftrace reads it.
void fill_pair(LowerCtx &c, llvm::Value *dst, const Type &pair, const MapTarget &map,
               llvm::Value *key, llvm::Value *value) {
  auto offs = frontend::tuple_offsets(pair.elems, nullptr);
  llvm::Value *src[2] = {key, value};
  for (size_t i = 0; i < 2; ++i) {
    const Type &t = pair.elems[i];
    Val v = is_memory_type(t) ? Val{src[i], 8} : load_value(c, src[i], 8, t);
    if (i == 1 && map.info->value.is_aggregate())
      v = Val{percpu_aggregate_value(c, map.index, map.info->value, key, c.opts->num_cpus)};
    store_value(c, c.byte_ptr(dst, offs[i]), align_at(8, offs[i]), t, v, t);
  }
}

// The probe's variables BODY assigns ($n = ..., $n += ..., $n++).
std::set<std::string> assigned_in(const frontend::Stmt &body) {
  std::set<std::string> keys;
  frontend::for_each_stmt(body, [&](const frontend::Stmt &st) {
    if (st.kind == frontend::StmtKind::VarAssign)
      keys.insert(st.as<frontend::VarAssignStmt>().var->key());
  });
  frontend::for_each_expr(body, [&](const frontend::Expr &e) {
    if (e.kind == frontend::ExprKind::Unary && frontend::is_step(e.as<frontend::UnaryExpr>().op) &&
        e.as<frontend::UnaryExpr>().operand->kind == frontend::ExprKind::Variable)
      keys.insert(e.as<frontend::UnaryExpr>().operand->as<frontend::VariableExpr>().key());
  });
  return keys;
}

} // namespace

void LowerCtx::lower_while(const frontend::WhileStmt &s) {
  if (!s.each_map)
    return Lowering::lower_while(s);
  MapTarget t = find_map(*this, s.each_map->name);
  Var &kv = variable(s.each_var->key(), s.each_var->type);
  if (!t.info || kv.type.kind != frontend::TypeKind::Tuple || kv.type.elems.size() != 2)
    return set_error("BUG: for over " + s.each_map->name + " has no (key, value) type");

  // The context array, filled on the probe's stack.
  std::vector<std::string> names;
  for (const auto &[name, var] : vars)
    names.push_back(name);
  auto *ptr_ty = b.getPtrTy();
  constexpr size_t kFixed = 4; // regs, scratch, saved_args, the return flag
  auto *arr_ty = llvm::ArrayType::get(ptr_ty, kFixed + names.size());
  llvm::AllocaInst *arr;
  {
    llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().begin());
    arr = eb.CreateAlloca(arr_ty);
    arr->setAlignment(llvm::Align(8));
  }
  auto slot = [&](llvm::IRBuilder<> &ib, llvm::Value *base, size_t i) {
    return ib.CreateConstInBoundsGEP2_32(arr_ty, base, 0, static_cast<unsigned>(i));
  };
  auto null = llvm::ConstantPointerNull::get(ptr_ty);
  llvm::Value *returned = stack_i64(*this);
  b.CreateStore(b.getInt64(0), returned);
  llvm::Value *outer[kFixed] = {regs, scratch ? scratch : null, saved_args ? saved_args : null,
                                returned};
  for (size_t i = 0; i < kFixed; ++i)
    b.CreateStore(outer[i], slot(b, arr, i));
  for (size_t i = 0; i < names.size(); ++i)
    b.CreateStore(vars[names[i]].ptr, slot(b, arr, kFixed + i));

  // The callback, in the probe's section after the probe's function.
  auto *cb_ty = llvm::FunctionType::get(b.getInt64Ty(), {ptr_ty, ptr_ty, ptr_ty, ptr_ty}, false);
  auto *cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                    fn->getName() + "_for_each", mod);
  cb->setSection(fn->getSection());
  cb->addFnAttr(llvm::Attribute::NoUnwind);
  cb->addFnAttr(llvm::Attribute::NoInline);

  auto *outer_fn = fn;
  auto *outer_block = b.GetInsertBlock();
  auto outer_vars = vars;
  llvm::Value *outer_regs = regs, *outer_scratch = scratch, *outer_saved = saved_args;
  uint32_t outer_stack = stack_temps_used;
  llvm::BasicBlock *outer_end = probe_end_;

  fn = cb;
  stack_temps_used = 0;
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", cb));
  llvm::Value *cb_arr = cb->getArg(3);
  auto reload = [&](size_t i) { return b.CreateLoad(ptr_ty, slot(b, cb_arr, i)); };
  regs = reload(0);
  scratch = outer_scratch ? reload(1) : nullptr;
  saved_args = outer_saved ? reload(2) : nullptr;
  for (size_t i = 0; i < names.size(); ++i)
    vars[names[i]].ptr = reload(kFixed + i);
  llvm::Value *cb_returned = reload(3);
  fill_pair(*this, vars[s.each_var->key()].ptr, kv.type, t, cb->getArg(1), cb->getArg(2));
  auto *next = llvm::BasicBlock::Create(ctx, "for_each.next", cb);
  auto *stop = llvm::BasicBlock::Create(ctx, "for_each.stop", cb);
  probe_end_ = llvm::BasicBlock::Create(ctx, "for_each.return", cb);
  lower_loop_body(*s.body, next, stop);
  b.CreateBr(next);
  b.SetInsertPoint(next);
  b.CreateRet(b.getInt64(0));
  b.SetInsertPoint(probe_end_);
  b.CreateStore(b.getInt64(1), cb_returned);
  b.CreateBr(stop);
  b.SetInsertPoint(stop);
  b.CreateRet(b.getInt64(1));

  fn = outer_fn;
  vars = std::move(outer_vars);
  regs = outer_regs;
  scratch = outer_scratch;
  saved_args = outer_saved;
  stack_temps_used = outer_stack;
  probe_end_ = outer_end;
  b.SetInsertPoint(outer_block);
  // The kernel verifies the callback as a loop, until an iteration starts in a state it has seen:
  // an integer the body changes ($n++) and the probe knew exactly (0) never gets there ("the
  // sequence of 8193 jumps is too complex"). Read over itself by a helper, its slot holds an
  // unknown value, and the iterations' states agree at once.
  for (const std::string &key : assigned_in(*s.body))
    if (auto it = vars.find(key); it != vars.end() && it->second.type.is_integer_like())
      call_helper(*this, BPF_FUNC_probe_read_kernel,
                  {it->second.ptr, b.getInt32(8), it->second.ptr});
  call_helper(*this, BPF_FUNC_for_each_map_elem, {map_ref(*this, t.index), cb, arr, b.getInt64(0)});
  auto *after = llvm::BasicBlock::Create(ctx, "for_each.after", fn);
  b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(b.getInt64Ty(), returned), b.getInt64(0)),
                 probe_end_, after);
  b.SetInsertPoint(after);
}

} // namespace gpubt::codegen::bpf
