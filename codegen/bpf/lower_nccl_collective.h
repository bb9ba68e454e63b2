// NCCL collectives in BPF: each one's number on its communicator (nccl_seq()) and whether a call
// runs inside another collective of the same thread (nccl_nested()). NCCL's ncclBcast calls the
// public ncclBroadcast (src/collectives.cc), so one broadcast fires both functions' probes: the
// thread's record of its outermost collective (comm, number, stack pointer at entry, function)
// makes the inner call the same collective, counted once, at the outermost return.
#pragma once
#include <set>
#include <string_view>

#include "codegen/bpf/lower_api.h"

namespace gpubt::codegen::bpf {

// The collectives' names in NCCL's catalog.
const std::set<std::string_view> &nccl_collectives();

// Hidden probes of collective SLOT (a row of stdlib::api_functions()): the entry records the
// thread's outermost collective, its return closes the record and counts it if it was issued.
void nccl_collective_entry(LowerCtx &c, uint32_t slot);
void nccl_collective_return(LowerCtx &c, uint32_t slot);

// nccl_seq(comm) and nccl_nested(comm) in the probe being lowered.
llvm::Value *lower_nccl_seq(LowerCtx &c, llvm::Value *comm);
llvm::Value *lower_nccl_nested(LowerCtx &c, llvm::Value *comm);

} // namespace gpubt::codegen::bpf
