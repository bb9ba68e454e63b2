// LLVM's O2 pipeline for a device module, as each DeviceTarget's optimize() runs it.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace gpubt::codegen {

// THEN: a pass pipeline (opt's syntax) run after O2, or none.
void optimize_o2(llvm::Module &m, llvm::TargetMachine *tm, const char *then = nullptr);

} // namespace gpubt::codegen
