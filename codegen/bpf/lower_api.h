// GPU API probes in BPF: typed `args.NAME` of catalogued functions (from pt_regs at entry, from
// the words a hidden entry program saved per thread in uretprobes), kname(), and the hidden
// programs that learn kernel handles (cudaKernel_t -> host stub, CUfunction/CUkernel -> name).
#pragma once
#include "codegen/bpf/lower_context.h"
#include "stdlib/api_catalog.h"

namespace gpubt::codegen::bpf {

// Saved argument words per (thread, uretprobe): 6 registers (rdi..r9) then 6 stack slots.
constexpr uint32_t kSavedArgWords = 12;

// Adds the internal maps the program's API probes need (saved arguments, kname tables).
void add_api_maps(const frontend::Program &program, layout::MapLayout &layout,
                  abi::ProgramSpec &spec);

// The symbols a uprobe on AP attaches to: for a catalogued function named as in the API, the
// catalog's primary symbol ("cuMemAlloc_v2") then its per-thread-stream variants
// ("cudaMemcpy_ptds"); else AP.func unchanged.
std::vector<std::string> api_attach_symbols(const frontend::AttachPoint &ap);

// At the top of a uretprobe whose probe reads args: fetches (and deletes) the words saved at
// entry into c.saved_args.
void load_saved_args(LowerCtx &c);

Val lower_api_arg(LowerCtx &c, const frontend::FieldExpr &e);
// Argument P of the probed function as TYPE (stdlib::api_param_type's), at entry or from the
// saved words.
Val lower_api_param(LowerCtx &c, const stdlib::ApiParam &p, const frontend::Type &type);
Val lower_kname(LowerCtx &c, llvm::Value *handle);

// A uprobe on a GPU API library (cudart, cuda, hip: an alias or a path to one).
bool is_gpu_api_probe(const frontend::AttachPoint &ap);
// Returns at once when the probe fires on one of gpubt's own threads in the traced process (the
// agent's, named abi::kAgentThreadPrefix...): their CUDA calls are gpubt's, not the program's.
void return_on_agent_thread(LowerCtx &c);

// A hidden program body: returns the scratch bytes used. Each is lowered into its own function.
struct HiddenProbe {
  abi::ProbeSpec spec; // name, kind, target, func, hidden = true
  void (*lower)(LowerCtx &c, uint32_t slot);
  uint32_t slot = 0; // saved_args slot (argument saving) or pending-key tag (kname)
};
std::vector<HiddenProbe> hidden_api_probes(const frontend::Program &program,
                                           const layout::MapLayout &layout);

} // namespace gpubt::codegen::bpf
