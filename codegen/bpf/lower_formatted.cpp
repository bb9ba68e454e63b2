// buf(), ntop(), pton(), macaddr(), strcontains() and join() -> IR.
#include "codegen/bpf/lower_formatted.h"

#include <arpa/inet.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cstring>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/lower_pointer.h"
#include "codegen/bpf/send_event.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

bool in_memory(const Type &t) { return t.kind == TypeKind::Array || t.kind == TypeKind::String; }

// N bytes of SRC (a value in memory, or a user address) to DST; a user read copies LEN bytes
// (an i64 at most N).
void copy_source(LowerCtx &c, llvm::Value *dst, const Expr &src, uint32_t n, llvm::Value *len) {
  Val v = lower_expr(c, src);
  if (in_memory(src.type)) {
    copy_bytes(c, dst, 1, v.v, v.align, std::min(n, src.type.size));
    return;
  }
  if (n == 0)
    return;
  call_helper(c, read_helper(c),
              {dst, c.b.CreateTrunc(len, c.b.getInt32Ty()), c.b.CreateIntToPtr(v.v, c.b.getPtrTy())});
}

} // namespace

Val lower_buf(LowerCtx &c, const CallExpr &call) {
  uint32_t n = call.type.size - 1;
  llvm::Value *out = scratch_slot(c, call.type.size);
  zero_bytes(c, out, 8, call.type.size);
  llvm::Value *len = c.b.getInt64(n);
  if (call.args.size() > 1 && call.args[1]->kind != ExprKind::Integer) {
    // A length known only when the probe runs: at most the buffer, as the verifier must see.
    llvm::Value *want = lower_expr(c, *call.args[1]).v;
    len = c.b.CreateSelect(c.b.CreateICmpULT(want, len), want, len);
  }
  // A value in memory (a string literal, an array) gives its bytes, zero past its end.
  copy_source(c, byte_ptr(c, out, 1), *call.args[0], n, len);
  c.b.CreateStore(c.b.CreateTrunc(len, c.b.getInt8Ty()), out);
  return {out, 8};
}

Val lower_ntop(LowerCtx &c, const CallExpr &call) {
  const Expr &addr = *call.args.back();
  bool v6 = addr.type.kind == TypeKind::Array && addr.type.size == 16;
  llvm::Value *af = call.args.size() > 1 ? lower_expr(c, *call.args[0]).v
                                         : c.b.getInt64(v6 ? AF_INET6 : AF_INET);
  llvm::Value *out = scratch_slot(c, 24);
  zero_bytes(c, out, 8, 24);
  c.b.CreateAlignedStore(af, out, llvm::Align(8));
  if (addr.type.kind == TypeKind::Array) {
    Val v = lower_expr(c, addr);
    copy_bytes(c, byte_ptr(c, out, 8), 8, v.v, v.align, std::min<uint32_t>(addr.type.size, 16));
  } else { // an IPv4 address in an integer, in network order in memory
    store_int(c, byte_ptr(c, out, 8), 8, lower_expr(c, addr).v, 4);
  }
  return {out, 8};
}

Val lower_pton(LowerCtx &c, const CallExpr &call) {
  const std::string *text = call_literal_text(call);
  uint8_t bytes[16] = {};
  uint32_t n = call.type.size;
  if (text)
    inet_pton(n == 16 ? AF_INET6 : AF_INET, text->c_str(), bytes);
  llvm::Value *out = scratch_slot(c, n);
  for (uint32_t i = 0; i < n; ++i)
    c.b.CreateStore(c.b.getInt8(bytes[i]), byte_ptr(c, out, i));
  return {out, 8};
}

Val lower_macaddr(LowerCtx &c, const CallExpr &call) {
  llvm::Value *out = scratch_slot(c, 6);
  zero_bytes(c, out, 8, 6);
  copy_source(c, out, *call.args[0], 6, c.b.getInt64(6));
  return {out, 8};
}

Val lower_strlen(LowerCtx &c, const CallExpr &call) {
  const Expr &s = *call.args[0];
  if (s.kind == ExprKind::String) {
    const std::string &v = s.as<StringExpr>().value;
    return {c.b.getInt64(int64_t(std::string(v.c_str()).size()))};
  }
  // A bounded loop: i = 0; while (i < size - 1 && s[i] != 0) i++.
  Val v = lower_expr(c, s);
  uint64_t most = s.type.size ? s.type.size - 1 : 0;
  auto *i64 = c.b.getInt64Ty();
  auto block = [&](const char *name) { return llvm::BasicBlock::Create(c.ctx, name, c.fn); };
  llvm::BasicBlock *entry = c.b.GetInsertBlock();
  auto *head = block("strlen.head"), *body = block("strlen.body"), *done = block("strlen.done");
  c.b.CreateBr(head);
  c.b.SetInsertPoint(head);
  auto *i = c.b.CreatePHI(i64, 2);
  i->addIncoming(c.b.getInt64(0), entry);
  c.b.CreateCondBr(c.b.CreateICmpULT(i, c.b.getInt64(most)), body, done);
  c.b.SetInsertPoint(body);
  auto *ch = c.b.CreateLoad(c.b.getInt8Ty(), c.b.CreateInBoundsGEP(c.b.getInt8Ty(), v.v, i));
  auto *next = c.b.CreateAdd(i, c.b.getInt64(1));
  i->addIncoming(next, body);
  c.b.CreateCondBr(c.b.CreateICmpEQ(ch, c.b.getInt8(0)), done, head);
  c.b.SetInsertPoint(done);
  auto *n = c.b.CreatePHI(i64, 2);
  n->addIncoming(i, head);
  n->addIncoming(i, body);
  return {n};
}

Val lower_strcontains(LowerCtx &c, const CallExpr &call) {
  const Expr &hay = *call.args[0], &needle = *call.args[1];
  if (hay.kind == ExprKind::String && needle.kind == ExprKind::String) {
    const std::string &h = hay.as<StringExpr>().value, &n = needle.as<StringExpr>().value;
    std::string hs(h.c_str()), ns(n.c_str()); // up to the first NUL, as the strings compare
    return {c.b.getInt64(hs.find(ns) != std::string::npos)};
  }
  // For each start in the haystack, the needle's bytes agree up to its NUL: two bounded loops
  // (unrolled, 64 x 64 byte compares spill past the 512-byte BPF stack).
  Val h = lower_expr(c, hay), nv = lower_expr(c, needle);
  uint64_t hn = hay.type.size, nn = needle.type.size;
  auto *i64 = c.b.getInt64Ty();
  auto at = [&](Val s, llvm::Value *i) {
    return c.b.CreateLoad(c.b.getInt8Ty(), c.b.CreateInBoundsGEP(c.b.getInt8Ty(), s.v, i));
  };
  auto block = [&](const char *name) { return llvm::BasicBlock::Create(c.ctx, name, c.fn); };
  llvm::Value *result = stack_i64(c);
  c.b.CreateStore(c.b.getInt64(0), result);
  llvm::BasicBlock *entry = c.b.GetInsertBlock();
  auto *outer = block("sc.outer"), *inner = block("sc.inner"), *check = block("sc.check"),
       *latch = block("sc.latch"), *next = block("sc.next"), *found = block("sc.found"),
       *done = block("sc.done");
  c.b.CreateBr(outer);

  c.b.SetInsertPoint(outer);
  auto *i = c.b.CreatePHI(i64, 2);
  i->addIncoming(c.b.getInt64(0), entry);
  c.b.CreateCondBr(c.b.CreateICmpULT(i, c.b.getInt64(hn)), inner, done);

  c.b.SetInsertPoint(inner);
  auto *j = c.b.CreatePHI(i64, 2);
  j->addIncoming(c.b.getInt64(0), outer);
  auto *whole = block("sc.byte");
  c.b.CreateCondBr(c.b.CreateICmpUGE(j, c.b.getInt64(nn)), found, whole);
  c.b.SetInsertPoint(whole);
  llvm::Value *nb = at(nv, j);
  c.b.CreateCondBr(c.b.CreateICmpEQ(nb, c.b.getInt8(0)), found, check);

  c.b.SetInsertPoint(check);
  llvm::Value *k = c.b.CreateAdd(i, j);
  auto *in_hay = block("sc.inhay");
  c.b.CreateCondBr(c.b.CreateICmpUGE(k, c.b.getInt64(hn)), next, in_hay);
  c.b.SetInsertPoint(in_hay);
  c.b.CreateCondBr(c.b.CreateICmpEQ(at(h, k), nb), latch, next);

  c.b.SetInsertPoint(latch);
  j->addIncoming(c.b.CreateAdd(j, c.b.getInt64(1)), latch);
  c.b.CreateBr(inner);

  c.b.SetInsertPoint(next); // past the haystack's NUL no start can match
  auto *more = block("sc.more");
  c.b.CreateCondBr(c.b.CreateICmpEQ(at(h, i), c.b.getInt8(0)), done, more);
  c.b.SetInsertPoint(more);
  i->addIncoming(c.b.CreateAdd(i, c.b.getInt64(1)), more);
  c.b.CreateBr(outer);

  c.b.SetInsertPoint(found);
  c.b.CreateStore(c.b.getInt64(1), result);
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
  return {c.b.CreateLoad(i64, result)};
}

void lower_join(LowerCtx &c, const CallExpr &call) {
  abi::JoinSpec js;
  if (call.args.size() > 1 && call.args[1]->kind == ExprKind::String)
    js.delim = call.args[1]->as<StringExpr>().value;
  uint32_t index = c.spec->joins.size();
  c.spec->joins.push_back(js);
  llvm::Value *argv = lower_expr(c, *call.args[0]).v;
  llvm::Value *slot = stack_i64(c);
  send_event(c, abi::EventKind::Join, index, js.args * js.size, [&](llvm::Value *payload) {
    // Each string's first byte only (zeroing 1 KiB is a memset BPF cannot call): an empty
    // string ends the list.
    for (uint32_t i = 0; i < js.args; ++i)
      c.b.CreateStore(c.b.getInt8(0), byte_ptr(c, payload, i * js.size));
    auto *done = llvm::BasicBlock::Create(c.ctx, "join.done", c.fn);
    for (uint32_t i = 0; i < js.args; ++i) {
      // argv[i]; a NULL one ends the array.
      c.b.CreateStore(c.b.getInt64(0), slot);
      auto *at = c.b.CreateAdd(argv, c.b.getInt64(8 * i));
      call_helper(c, BPF_FUNC_probe_read_user,
                  {slot, c.b.getInt32(8), c.b.CreateIntToPtr(at, c.b.getPtrTy())});
      llvm::Value *p = c.b.CreateLoad(c.b.getInt64Ty(), slot);
      auto *read = llvm::BasicBlock::Create(c.ctx, "join.arg", c.fn);
      c.b.CreateCondBr(c.b.CreateICmpEQ(p, c.b.getInt64(0)), done, read);
      c.b.SetInsertPoint(read);
      call_helper(c, BPF_FUNC_probe_read_user_str,
                  {byte_ptr(c, payload, i * js.size), c.b.getInt32(js.size),
                   c.b.CreateIntToPtr(p, c.b.getPtrTy())});
    }
    c.b.CreateBr(done);
    c.b.SetInsertPoint(done);
  });
}

} // namespace gpubt::codegen::bpf
