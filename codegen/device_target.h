// The one interface a device back end implements (PTX now, SPIR-V later). Device probe lowering
// in codegen/device is written against it; each target's header declares only a factory.
#pragma once
#include <memory>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "runtime/abi/result.h"

namespace gpubt::codegen {

enum class Dim { X, Y, Z };

struct TargetOptions {
  std::string arch = "sm_90"; // PTX: the SM the code is for; the agent may re-target at load
};

class DeviceTarget {
public:
  virtual ~DeviceTarget() = default;
  virtual std::string name() const = 0;                        // "ptx"
  virtual void prepare_module(llvm::Module &m) const = 0;      // triple, data layout
  virtual llvm::Value *thread_index(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *block_index(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *block_dim(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *grid_dim(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual Result<std::string> emit(llvm::Module &m) const = 0; // PTX text, SPIR-V words
};

} // namespace gpubt::codegen
