// BTF func_info for programs with callbacks (for over a map: bpf_for_each_map_elem): the
// kernel loads a program whose instructions take a function's address (ld_imm64 with
// src_reg = BPF_PSEUDO_FUNC) only with one BTF FUNC per subprogram.
#pragma once
#include <cstdint>
#include <vector>

#include <linux/bpf.h>

#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

struct FuncInfo {
  UniqueFd btf; // invalid when the program has no callbacks (then INFO is empty)
  std::vector<bpf_func_info> info;
};

// The subprograms INSNS refers to, and a minimal BTF (loaded) naming them.
Result<FuncInfo> func_info_for(const std::vector<bpf_insn> &insns);

} // namespace gpubt::runtime
