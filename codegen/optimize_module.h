// LLVM's O2 pipeline for a device module, as each DeviceTarget's optimize() runs it.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace gpubt::codegen {

void optimize_o2(llvm::Module &m, llvm::TargetMachine *tm);

} // namespace gpubt::codegen
