// LLVM module -> BPF ELF object (in memory, no external tools) -> one instruction array per
// probe section.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "runtime/abi/result.h"

namespace gpubt::codegen::bpf {

// Sets the module's triple ("bpfel") and data layout for CPU v3.
Status prepare_bpf_module(llvm::Module &m);
// Runs LLVM's O2 pipeline (with the BPF target's own IR passes) on a prepared module.
Status optimize_bpf_module(llvm::Module &m);

// An error LLVM's BPF back end reported while it emitted the object (a function's stack past
// 512 bytes, a construct it cannot select): the function it names (null if none) and its text.
struct BackendError {
  const llvm::Function *function = nullptr;
  std::string message;
};
// The object; or, where the back end reported errors (which LLVM would print and exit on), those
// in ERRORS and an error naming the first.
Result<std::vector<uint8_t>> emit_bpf_object(llvm::Module &m, std::vector<BackendError> &errors);

// Section name -> instruction words for every section whose name starts with PREFIX. Fails
// with "BUG:" if such a section has relocations or the object has data sections.
Result<std::map<std::string, std::vector<uint64_t>>>
extract_sections(const std::vector<uint8_t> &object, const std::string &prefix);

} // namespace gpubt::codegen::bpf
