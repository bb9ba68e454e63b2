// The device half of codegen: gpu probes -> one patch function each (the Compute Sanitizer
// signature of runtime/abi/device_abi.h) -> PTX through a DeviceTarget, with the layouts of
// their device maps, packaged into ProgramSpec::device.
#pragma once
#include <string>
#include <vector>

#include "codegen/device_target.h"
#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::codegen::device {

struct DeviceCodegenOptions {
  // Entries per keyed map, a power of two; 0: GPUBT_DEFAULT_MAP_CAPACITY, halved until the map's
  // storage fits GPUBT_DEFAULT_MAP_BYTES.
  uint32_t map_capacity = 0;
  uint32_t ring_capacity = GPUBT_DEFAULT_RING_BYTES;  // printf ring bytes, a power of two
  bool optimize = true;
  // Where --timeline's warnings go (spec.timeline turns its launch records on); may be null.
  std::vector<std::string> *warnings = nullptr;
};

bool has_gpu_probes(const frontend::Program &program);

// Lowers every gpu probe into spec.device (probes, map layouts, PTX), appending printf formats
// to spec.formats and probe names to spec.probe_names. spec.maps must already list every map
// (codegen::bpf::lower_to_bpf does). A map used by both host and gpu probes follows
// frontend/passes/map_sharing.h: a refused one is an error here too. LLVM_IR, if given, receives
// the optimized module.
Status lower_device_probes(const frontend::Program &program, const frontend::SemanticInfo &sema,
                           const DeviceTarget &target, const DeviceCodegenOptions &opts,
                           abi::ProgramSpec &spec, std::string *llvm_ir = nullptr);

} // namespace gpubt::codegen::device
