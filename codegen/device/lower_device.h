// The device half of codegen: gpu probes -> one patch function each (the Compute Sanitizer
// signature of runtime/abi/device_abi.h) -> PTX through a DeviceTarget, with the layouts of
// their device maps, packaged into ProgramSpec::device.
#pragma once
#include <string>
#include <vector>

#include "codegen/device_target.h"
#include "codegen/layout/program_layout.h"
#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::codegen::device {

struct DeviceCodegenOptions {
  uint32_t ring_capacity = GPUBT_DEFAULT_RING_BYTES;  // printf ring bytes, a power of two
  bool optimize = true;
  // Where --timeline's warnings go (spec.timeline turns its launch records on); may be null.
  std::vector<std::string> *warnings = nullptr;
};

// Lowers every gpu probe into spec.device (probes, PTX or another image), appending printf
// formats to spec.formats and probe names to spec.probe_names. SPEC starts as LAYOUT's spec (or
// the BPF lowering's, which starts there too): its maps and device map layouts are LAYOUT's.
// LLVM_IR, if given, receives the optimized module.
Status lower_device_probes(const frontend::Program &program, const frontend::SemanticInfo &sema,
                           const layout::ProgramLayout &layout, const DeviceTarget &target,
                           const DeviceCodegenOptions &opts, abi::ProgramSpec &spec,
                           std::string *llvm_ir = nullptr);

} // namespace gpubt::codegen::device
