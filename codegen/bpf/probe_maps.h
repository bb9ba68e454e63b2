// What the hidden API probes share: reading the probed thread's registers, per-thread pending
// keys, internal hash maps and their lookups, and a block that runs only for a non-null pointer.
#pragma once
#include <functional>
#include <string>

#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// The u64 at byte OFF of the probe's struct pt_regs (stdlib::pt_regs_arg_offset(i) and friends).
llvm::Value *ctx_word(LowerCtx &c, uint32_t off);
// The current thread id (the low half of bpf_get_current_pid_tgid).
llvm::Value *current_tid(LowerCtx &c);
// A u64 map key (TAG << 32 | tid) in a stack slot.
llvm::Value *tid_key(LowerCtx &c, uint32_t tag);

llvm::Value *map_lookup(LowerCtx &c, int map, llvm::Value *key);
void map_update(LowerCtx &c, int map, llvm::Value *key, llvm::Value *value);
// bpf_probe_read_user(DST, SIZE, ADDR).
void read_user(LowerCtx &c, llvm::Value *dst, uint32_t size, llvm::Value *addr);
// Runs BODY only when PTR is non-null; continues after it either way.
void if_nonnull(LowerCtx &c, llvm::Value *ptr, const std::function<void()> &body);
// Runs BODY only when COND holds; continues after it either way.
void if_true(LowerCtx &c, llvm::Value *cond, const std::function<void()> &body);

// An internal map of TYPE (a BPF_MAP_TYPE_*) appended to SPEC; returns its index.
int push_internal_map(abi::ProgramSpec &spec, const std::string &name, uint32_t type, uint32_t key,
                      uint32_t value, uint32_t entries);

} // namespace gpubt::codegen::bpf
