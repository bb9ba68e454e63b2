// IR building blocks for BPF: helper calls, map references, scratch slots, byte copies and
// typed loads/stores. Everything is emitted inline: the object must have no calls or relocations.
#pragma once
#include <initializer_list>

#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// call <helper id>(args...) returning i64 (or RET, e.g. a pointer for map lookups).
llvm::Value *call_helper(LowerCtx &c, int helper, llvm::ArrayRef<llvm::Value *> args,
                         llvm::Type *ret = nullptr);

// A map reference: ld_imm64 with src_reg = BPF_PSEUDO_MAP_FD and imm = the map's index.
llvm::Value *map_ref(LowerCtx &c, int map_index);
// A `ld_imm64 SRC_REG IMM` the kernel resolves at load (BPF_PSEUDO_MAP_FD, BPF_PSEUDO_BTF_ID).
llvm::Value *pseudo_imm64(LowerCtx &c, int src_reg, int64_t imm);

// A fixed slot of SIZE bytes (8-aligned) in this CPU's scratch area.
llvm::Value *scratch_slot(LowerCtx &c, uint32_t size);
// An i64 stack slot in the entry block, zeroed there.
llvm::Value *stack_i64(LowerCtx &c);

inline llvm::Value *byte_ptr(LowerCtx &c, llvm::Value *base, uint32_t offset) {
  return c.byte_ptr(base, offset);
}

void zero_bytes(LowerCtx &c, llvm::Value *dst, uint32_t align, uint32_t size);
void copy_bytes(LowerCtx &c, llvm::Value *dst, uint32_t dst_align, llvm::Value *src,
                uint32_t src_align, uint32_t size);

// i64 <-> memory of SIZE bytes (1/2/4/8).
void store_int(LowerCtx &c, llvm::Value *ptr, uint32_t align, llvm::Value *v, uint32_t size);
llvm::Value *load_int(LowerCtx &c, llvm::Value *ptr, uint32_t align, uint32_t size,
                      bool is_signed);
// Truncates an i64 to T's width and extends it back by T's signedness.
llvm::Value *normalize(LowerCtx &c, llvm::Value *v, const frontend::Type &t);

// A value of type T read from memory: integers are loaded, strings/tuples stay pointers.
Val load_value(LowerCtx &c, llvm::Value *ptr, uint32_t align, const frontend::Type &t);
// Stores SRC (of type SRC_T) into DST laid out as DST_T: integers resized, strings cut or
// NUL-padded, tuples element by element with zeroed padding.
void store_value(LowerCtx &c, llvm::Value *dst, uint32_t dst_align, const frontend::Type &dst_t,
                 Val src, const frontend::Type &src_t);

bool is_memory_type(const frontend::Type &t); // String, Tuple, Record, Array, the stacks

// Starts a new block after a `ret` so later statements have somewhere to go (dead code).
void start_dead_block(LowerCtx &c);
inline void set_error(LowerCtx &c, std::string msg) { c.set_error(std::move(msg)); }

} // namespace gpubt::codegen::bpf
