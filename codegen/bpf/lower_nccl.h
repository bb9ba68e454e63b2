// NCCL communicators in BPF: nccl_rank(), nccl_nranks(), nccl_comm_id() and nccl_seq() read
// tables that hidden probes fill where communicators are made (ncclCommInitRank[Config],
// ncclCommInitAll, ncclCommSplit, answers of ncclCommUserRank/ncclCommCount) and where each
// collective returns (its per-communicator sequence number); nccl_nested() reads the thread's
// record of its outermost collective (lower_nccl_collective.h).
#pragma once
#include <vector>

#include "codegen/bpf/lower_api.h"

namespace gpubt::codegen::bpf {

// Adds the communicator, pending-call and sequence maps when the program calls an nccl_*()
// function.
void add_nccl_maps(const frontend::Program &program, layout::MapLayout &layout,
                   abi::ProgramSpec &spec);

// The hidden probes that fill them, on each NCCL target the script probes (`nccl`, `rccl` or a
// path; `nccl` if it probes none).
std::vector<HiddenProbe> hidden_nccl_probes(const frontend::Program &program,
                                            const layout::MapLayout &layout);

// Argument NAME of the probed catalogued function FN, at entry, as an i64.
llvm::Value *nccl_entry_arg(LowerCtx &c, const stdlib::ApiFunction &fn, std::string_view name);
// At a return: the call returned ncclSuccess or ncclInProgress (eax).
llvm::Value *nccl_returned_ok(LowerCtx &c);

// nccl_rank(comm) etc. of a communicator handle.
Val lower_nccl_call(LowerCtx &c, frontend::FunctionId id, llvm::Value *comm);

} // namespace gpubt::codegen::bpf
