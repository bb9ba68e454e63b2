// What the hidden API probes share (see probe_maps.h).
#include "codegen/bpf/probe_maps.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {

llvm::Value *ctx_word(LowerCtx &c, uint32_t off) {
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, c.regs, off), llvm::Align(8));
}

llvm::Value *current_tid(LowerCtx &c) {
  return c.b.CreateAnd(call_helper(c, BPF_FUNC_get_current_pid_tgid, {}), 0xffffffffu);
}

llvm::Value *tid_key(LowerCtx &c, uint32_t tag) {
  llvm::Value *key = stack_i64(c);
  c.b.CreateStore(c.b.CreateOr(current_tid(c), c.b.getInt64(uint64_t(tag) << 32)), key);
  return key;
}

llvm::Value *map_lookup(LowerCtx &c, int map, llvm::Value *key) {
  return call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, map), key}, c.b.getPtrTy());
}

void map_update(LowerCtx &c, int map, llvm::Value *key, llvm::Value *value) {
  call_helper(c, BPF_FUNC_map_update_elem, {map_ref(c, map), key, value, c.b.getInt64(BPF_ANY)});
}

void read_user(LowerCtx &c, llvm::Value *dst, uint32_t size, llvm::Value *addr) {
  call_helper(c, BPF_FUNC_probe_read_user,
              {dst, c.b.getInt32(size), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
}

void if_true(LowerCtx &c, llvm::Value *cond, const std::function<void()> &body) {
  auto *then = llvm::BasicBlock::Create(c.ctx, "if.then", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "if.done", c.fn);
  c.b.CreateCondBr(cond, then, done);
  c.b.SetInsertPoint(then);
  body();
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
}

void if_nonnull(LowerCtx &c, llvm::Value *ptr, const std::function<void()> &body) {
  if_true(c, c.b.CreateIsNotNull(ptr), body);
}

int push_internal_map(abi::ProgramSpec &spec, const std::string &name, uint32_t type, uint32_t key,
                      uint32_t value, uint32_t entries) {
  abi::MapSpec m;
  m.name = name;
  m.bpf_type = type;
  m.key_size = key;
  m.value_size = value;
  m.max_entries = entries;
  m.internal = true;
  spec.maps.push_back(std::move(m));
  return static_cast<int>(spec.maps.size() - 1);
}

} // namespace gpubt::codegen::bpf
