// SemanticInfo's maps -> abi::MapSpec rows (user maps, then the internal ring buffer, globals
// and scratch maps) with their BPF key and value sizes.
#pragma once
#include <map>
#include <string>

#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::codegen::layout {

struct MapLayout {
  std::map<std::string, int> user; // "@x" -> index into ProgramSpec::maps
  int ringbuf = -1, globals = -1, scratch = -1;
  // Internal maps of the GPU API probes (codegen/bpf/lower_api.h); -1 when the program needs
  // none. The BPF lowering adds them.
  int saved_args = -1, kname_stubs = -1, kname_names = -1, kname_pending = -1;
  int nccl_comms = -1, nccl_pending = -1, nccl_seq = -1; // codegen/bpf/lower_nccl.h
  int python_procs = -1; // pystack: pid -> abi::PythonProcess (codegen/bpf/lower_pystack.h)
};

// Bytes of the BPF key: a uint64 0 for scalar maps; hist/lhist append a uint64 bucket index
// after the user key padded to 8 bytes.
uint32_t user_key_size(const frontend::MapInfo &m);
uint32_t bpf_key_size(const frontend::MapInfo &m);
uint32_t bpf_value_size(const frontend::MapInfo &m);

// Appends every map to spec.maps and sets spec.ringbuf_map / spec.globals_map. The scratch
// map's value size is fixed by the BPF lowering, once every probe is lowered.
MapLayout add_map_specs(const frontend::SemanticInfo &sema, uint32_t max_entries,
                        abi::ProgramSpec &spec);

} // namespace gpubt::codegen::layout
