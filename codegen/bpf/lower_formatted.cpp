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

Val lower_strcontains(LowerCtx &c, const CallExpr &call) {
  const Expr &hay = *call.args[0], &needle = *call.args[1];
  if (hay.kind == ExprKind::String && needle.kind == ExprKind::String) {
    const std::string &h = hay.as<StringExpr>().value, &n = needle.as<StringExpr>().value;
    std::string hs(h.c_str()), ns(n.c_str()); // up to the first NUL, as the strings compare
    return {c.b.getInt64(hs.find(ns) != std::string::npos)};
  }
  // For each start in the haystack: the needle's bytes agree up to its NUL. Unrolled: both
  // strings are at most BPFTRACE_STRLEN bytes, and the verifier then sees every access.
  Val h = lower_expr(c, hay), nv = lower_expr(c, needle);
  uint32_t hn = hay.type.size, nn = needle.type.size;
  auto byte = [&](Val s, uint32_t i) {
    return c.b.CreateLoad(c.b.getInt8Ty(), byte_ptr(c, s.v, i));
  };
  llvm::Value *found = c.b.getFalse();
  llvm::Value *hay_ended = c.b.getFalse(); // a start past the haystack's NUL
  for (uint32_t start = 0; start < hn; ++start) {
    llvm::Value *match = c.b.CreateNot(hay_ended);
    llvm::Value *needle_ended = c.b.getFalse();
    for (uint32_t j = 0; j < nn && start + j < hn; ++j) {
      llvm::Value *nb = byte(nv, j);
      needle_ended = c.b.CreateOr(needle_ended, c.b.CreateICmpEQ(nb, c.b.getInt8(0)));
      llvm::Value *same = c.b.CreateICmpEQ(byte(h, start + j), nb);
      match = c.b.CreateAnd(match, c.b.CreateOr(needle_ended, same));
    }
    found = c.b.CreateOr(found, match);
    hay_ended = c.b.CreateOr(hay_ended, c.b.CreateICmpEQ(byte(h, start), c.b.getInt8(0)));
  }
  return {c.b.CreateZExt(found, c.b.getInt64Ty())};
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
