// The state shared by the lowering of one probe function: the IR builder, the maps, the
// per-CPU scratch area where large temporaries live (the BPF stack is only 512 bytes).
#pragma once
#include <map>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/bpf/lower_bpf.h"
#include "codegen/layout/map_layout.h"

namespace gpubt::codegen::bpf {

// An integer-like value is an i64 (already truncated and re-extended to its type's width);
// strings and tuples are a pointer to type.size bytes with the given alignment.
struct Val {
  llvm::Value *v = nullptr;
  uint32_t align = 8;
};

struct LowerCtx {
  LowerCtx(llvm::Module &m) : mod(m), ctx(m.getContext()), b(m.getContext()) {}
  llvm::Module &mod;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  llvm::Value *regs = nullptr;    // the program's context argument
  llvm::Value *scratch = nullptr; // this CPU's scratch area (non-null past the entry check)
  uint32_t scratch_used = 0;
  uint32_t stack_temps_used = 0; // small temporaries placed on the stack instead (scratch_slot)
  // uretprobes of catalogued API functions: the argument words saved at entry (regs then stack
  // slots, see lower_api.h), or null.
  llvm::Value *saved_args = nullptr;

  const frontend::SemanticInfo *sema = nullptr;
  const BpfCodegenOptions *opts = nullptr;
  const frontend::Probe *probe = nullptr;
  const frontend::AttachPoint *ap = nullptr;
  const abi::UsdtSite *usdt = nullptr; // usdt: the one site this function is for
  uint32_t probe_index = 0; // index into ProgramSpec::probes / probe_names
  abi::ProgramSpec *spec = nullptr;
  const layout::MapLayout *maps = nullptr;

  struct Var {
    frontend::Type type;
    llvm::Value *ptr = nullptr; // alloca (integers) or scratch slot (strings, tuples)
  };
  std::map<std::string, Var> vars;
  std::string error; // first error met; lowering goes on but the result is discarded
  frontend::SourceSpan span; // the expression being lowered (-k's helper errors name it)
};

} // namespace gpubt::codegen::bpf
