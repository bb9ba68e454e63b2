// for ($kv : @map) { body } in host probes: bpf_for_each_map_elem(map, callback, ctx, 0), the
// body in CALLBACK(map, key, value, ctx), a BPF subprogram placed in the probe's own section
// (extract_sections links the call; the loader adds the BTF func_info the kernel wants).
// CTX is an array on the probe's stack: the program's context, its scratch area, the saved API
// arguments, a flag `return` sets, then a pointer to each of the probe's variables, so the body
// reads and writes the probe's own variables (bpftrace passes them the same way). `continue`
// returns 0 (next element), `break` returns 1 (stop), `return` sets the flag and returns 1, and
// the probe (or the callback around) returns when it finds the flag set.
#include <linux/bpf.h>

#include <functional>
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

// The probe's variables BODY names: reads, writes, addresses.
std::set<std::string> used_in(const frontend::Stmt &body) {
  std::set<std::string> keys = assigned_in(body);
  frontend::for_each_expr(body, [&](const frontend::Expr &e) {
    if (e.kind == frontend::ExprKind::Variable)
      keys.insert(e.as<frontend::VariableExpr>().key());
  });
  return keys;
}

} // namespace

// The loop BODY lowered in a callback of TYPE (its argument CTX_ARG the context array) that a
// helper calls; FILL sets the loop variable from the callback's other arguments. CALL makes the
// helper's call, given the callback and the array; then a `return` in the body ends the probe.
void LowerCtx::callback_loop(const frontend::BlockStmt &body,
                             const std::vector<std::string> &loop_vars,
                             llvm::FunctionType *cb_ty, unsigned ctx_arg,
                             const std::function<void(llvm::Function *)> &fill,
                             const std::function<void(llvm::Function *, llvm::Value *)> &call) {
  LowerCtx &c = *this;
  // The context array, filled on the probe's stack: the variables the body names (and the loop
  // variables FILL sets, LOOP_VARS), so that a probe's many variables do not each take a slot.
  std::set<std::string> wanted = used_in(body);
  wanted.insert(loop_vars.begin(), loop_vars.end());
  std::vector<std::string> names;
  for (const auto &[name, var] : c.vars)
    if (wanted.count(name))
      names.push_back(name);
  auto *ptr_ty = b.getPtrTy();
  constexpr size_t kFixed = 4; // regs, scratch, saved_args, the return flag
  auto *arr_ty = llvm::ArrayType::get(ptr_ty, kFixed + names.size());
  // One array and return flag for all the loops of a function (a probe's, or a callback's for
  // the loops in a loop), as large as the largest needs: they are never live at once, and a
  // probe's stack is 512 bytes.
  LoopContext &shared = loop_contexts_[c.fn];
  if (!shared.array) {
    llvm::IRBuilder<> eb(&c.fn->getEntryBlock(), c.fn->getEntryBlock().begin());
    shared.array = eb.CreateAlloca(arr_ty);
    shared.array->setAlignment(llvm::Align(8));
    shared.returned = stack_i64(c);
  } else if (llvm::cast<llvm::ArrayType>(shared.array->getAllocatedType())->getNumElements() <
             arr_ty->getNumElements()) {
    shared.array->setAllocatedType(arr_ty);
  }
  llvm::AllocaInst *arr = shared.array;
  auto slot = [&](llvm::IRBuilder<> &ib, llvm::Value *base, size_t i) {
    return ib.CreateConstInBoundsGEP2_32(arr_ty, base, 0, static_cast<unsigned>(i));
  };
  auto null = llvm::ConstantPointerNull::get(ptr_ty);
  llvm::Value *returned = shared.returned;
  b.CreateStore(b.getInt64(0), returned);
  llvm::Value *outer[kFixed] = {c.regs, c.scratch ? c.scratch : null,
                                c.saved_args ? c.saved_args : null, returned};
  for (size_t i = 0; i < kFixed; ++i)
    b.CreateStore(outer[i], slot(b, arr, i));
  for (size_t i = 0; i < names.size(); ++i)
    b.CreateStore(c.vars[names[i]].ptr, slot(b, arr, kFixed + i));

  // The callback, in the probe's section after the probe's function.
  auto *cb = llvm::Function::Create(cb_ty, llvm::Function::InternalLinkage,
                                    c.fn->getName() + "_loop", c.mod);
  cb->setSection(c.fn->getSection());
  cb->addFnAttr(llvm::Attribute::NoUnwind);
  cb->addFnAttr(llvm::Attribute::NoInline);

  auto *outer_fn = c.fn;
  auto *outer_block = b.GetInsertBlock();
  auto outer_vars = c.vars;
  llvm::Value *outer_regs = c.regs, *outer_scratch = c.scratch, *outer_saved = c.saved_args;
  llvm::BasicBlock *outer_end = c.probe_end_;

  // stack_temps_used goes on counting: the callback's frame sits on the probe's (on kernels
  // without a private BPF stack, before 6.14 or off x86-64/arm64, the verifier sums the frames
  // of a probe and its loop callbacks against one 512 bytes), so the callback's small
  // temporaries share the probe's budget, and past it go to the scratch area.
  c.fn = cb;
  b.SetInsertPoint(llvm::BasicBlock::Create(c.ctx, "entry", cb));
  llvm::Value *cb_arr = cb->getArg(ctx_arg);
  auto reload = [&](size_t i) { return b.CreateLoad(ptr_ty, slot(b, cb_arr, i)); };
  c.regs = reload(0);
  c.scratch = outer_scratch ? reload(1) : nullptr;
  c.saved_args = outer_saved ? reload(2) : nullptr;
  c.vars.clear(); // the body's own variables are the callback's
  for (size_t i = 0; i < names.size(); ++i) {
    c.vars[names[i]] = outer_vars[names[i]];
    c.vars[names[i]].ptr = reload(kFixed + i);
  }
  llvm::Value *cb_returned = reload(3);
  fill(cb);
  auto *next = llvm::BasicBlock::Create(c.ctx, "loop.next", cb);
  auto *stop = llvm::BasicBlock::Create(c.ctx, "loop.stop", cb);
  c.probe_end_ = llvm::BasicBlock::Create(c.ctx, "loop.return", cb);
  c.lower_loop_body(body, next, stop);
  b.CreateBr(next);
  b.SetInsertPoint(next);
  b.CreateRet(b.getInt64(0));
  b.SetInsertPoint(c.probe_end_);
  b.CreateStore(b.getInt64(1), cb_returned);
  b.CreateBr(stop);
  b.SetInsertPoint(stop);
  b.CreateRet(b.getInt64(1));

  c.fn = outer_fn;
  c.vars = std::move(outer_vars);
  c.regs = outer_regs;
  c.scratch = outer_scratch;
  c.saved_args = outer_saved;
  c.probe_end_ = outer_end;
  b.SetInsertPoint(outer_block);
  // The kernel verifies the callback as a loop, until an iteration starts in a state it has seen:
  // an integer the body changes ($n++) and the probe knew exactly (0) never gets there ("the
  // sequence of 8193 jumps is too complex"). Read over itself by a helper, its slot holds an
  // unknown value, and the iterations' states agree at once.
  for (const std::string &key : assigned_in(body))
    if (auto it = c.vars.find(key); it != c.vars.end() && it->second.type.is_integer_like())
      call_helper(c, BPF_FUNC_probe_read_kernel, {it->second.ptr, b.getInt32(8), it->second.ptr});
  call(cb, arr);
  auto *after = llvm::BasicBlock::Create(c.ctx, "loop.after", c.fn);
  b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(b.getInt64Ty(), returned), b.getInt64(0)),
                 c.probe_end_, after);
  b.SetInsertPoint(after);
}

void LowerCtx::lower_while(const frontend::WhileStmt &s) {
  auto *ptr_ty = b.getPtrTy();
  if (s.is_range) {
    // for ($i : a..b) as bpf_loop(b - a, callback(index, ctx)) (0 times where b <= a), the
    // callback setting $i = a + index; the end was evaluated once into $i.end, a is in $i and
    // kept in a slot of its own, $i.start, that the callback reads as it reads every variable.
    const auto &cond = s.cond->as<frontend::BinaryExpr>();
    const auto &i_var = cond.lhs->as<frontend::VariableExpr>();
    llvm::Value *start = lower_expr(*cond.lhs).v;
    llvm::Value *end = lower_expr(*cond.rhs).v;
    llvm::Value *count =
        b.CreateSelect(b.CreateICmpSLT(start, end), b.CreateSub(end, start), b.getInt64(0));
    assign_variable(i_var.key() + ".start", Val{start}, frontend::Type::integer());
    auto *cb_ty = llvm::FunctionType::get(b.getInt64Ty(), {b.getInt64Ty(), ptr_ty}, false);
    callback_loop(
        *s.body, {i_var.key(), i_var.key() + ".start"}, cb_ty, 1,
        [&](llvm::Function *cb) {
          llvm::Value *first = b.CreateLoad(b.getInt64Ty(), vars[i_var.key() + ".start"].ptr);
          assign_variable(i_var.key(), Val{b.CreateAdd(first, cb->getArg(0))},
                          frontend::Type::integer());
        },
        [&](llvm::Function *cb, llvm::Value *arr) {
          // bpf_loop takes at most 1 << 23 iterations; more is -E2BIG and no iteration.
          call_helper(*this, BPF_FUNC_loop,
                      {b.CreateTrunc(count, b.getInt32Ty()), cb, arr, b.getInt64(0)});
        });
    return;
  }
  if (!s.each_map)
    return Lowering::lower_while(s);
  MapTarget t = find_map(*this, s.each_map->name);
  const Type kv_type = variable(s.each_var->key(), s.each_var->type).type; // vars changes below
  if (!t.info || kv_type.kind != frontend::TypeKind::Tuple || kv_type.elems.size() != 2)
    return set_error("BUG: for over " + s.each_map->name + " has no (key, value) type");
  auto *cb_ty = llvm::FunctionType::get(b.getInt64Ty(), {ptr_ty, ptr_ty, ptr_ty, ptr_ty}, false);
  callback_loop(
      *s.body, {s.each_var->key()}, cb_ty, 3,
      [&](llvm::Function *cb) {
        fill_pair(*this, vars[s.each_var->key()].ptr, kv_type, t, cb->getArg(1), cb->getArg(2));
      },
      [&](llvm::Function *cb, llvm::Value *arr) {
        call_helper(*this, BPF_FUNC_for_each_map_elem, {map_ref(*this, t.index), cb, arr,
                                                        b.getInt64(0)});
      });
}

} // namespace gpubt::codegen::bpf
