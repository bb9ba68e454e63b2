// Integer operations with bpftrace's semantics on i64 values, shared by the host (BPF) and
// device lowerings: width normalization, binary operators, hist/lhist bucket indexes.
#pragma once
#include <llvm/IR/IRBuilder.h>

#include "frontend/ast.h"
#include "frontend/types.h"

namespace gpubt::codegen {

// Truncates an i64 to T's width and extends it back by T's signedness.
llvm::Value *normalize_int(llvm::IRBuilder<> &b, llvm::Value *v, const frontend::Type &t);

// Unsigned / and % (x / 0 == 0, x % 0 == x), shifts masked to 63, comparisons as 0/1; the
// result cut to RESULT's width.
llvm::Value *int_binop(llvm::IRBuilder<> &b, frontend::BinaryOp op, llvm::Value *l, llvm::Value *r,
                       bool is_signed, const frontend::Type &result);

// popcount(v): the bits set in the i64 V's low T.size bytes (a negative int32 counts 32 bits at
// most), as an i64.
llvm::Value *popcount_int(llvm::IRBuilder<> &b, llvm::Value *v, const frontend::Type &t);

// Bucket indexes as runtime/abi/program_spec.h numbers them.
llvm::Value *hist_bucket(llvm::IRBuilder<> &b, llvm::Value *v);
llvm::Value *lhist_bucket(llvm::IRBuilder<> &b, llvm::Value *v, const frontend::Type &t);

} // namespace gpubt::codegen
