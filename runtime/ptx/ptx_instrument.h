// Puts gpu probes into a module's own PTX: each chosen kernel calls its entry probe at its start,
// its exit probe before every ret/exit (an exit probe that reads a clock: before the branch
// deciding an exit, retargeted past a probe where needed), its memory probe before each ld, st,
// atom and red, and its barrier probe before each bar.sync; every other line stays as it was.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

// The instrumented module declares `.visible .global .align 8 .u64 gpubt_userdata[N]` (or
// PtxInstrumentOptions::userdata_symbol), N the
// number of kernels instrumented. Kernel i (PtxInstrumentOptions::kernels order) passes
// gpubt_userdata[i] to its probes as `userdata` (pc is 0): the agent finds the array with
// cuModuleGetGlobal(module, "gpubt_userdata") and writes each kernel's gpubt_device_ctx address
// there before the first launch. A probe sees NULL until then and must return at once.
constexpr const char *kPtxUserdataSymbol = "gpubt_userdata";

struct PtxKernelProbes {
  std::string kernel;      // the .entry name, mangled
  std::string entry_probe; // called by every thread at the kernel's start; empty: none
  std::string exit_probe;  // called once on every way out, as the way is decided; empty: none
  // called before each memory access MEMORY_ACCESS (abi::MemoryAccessBits, 0: every one) may
  // want, and before each block-wide barrier (ptx_access_sites.h); empty: none
  std::string memory_probe;
  uint32_t memory_access = 0;
  std::string barrier_probe;
};

struct PtxInstrumentOptions {
  std::vector<PtxKernelProbes> kernels;
  // The probes' module as targets/ptx emits it: `.func (.param .b32 r) NAME(.param .b64
  // userdata, .param .b64 pc)` functions, maybe globals. Its header lines are dropped, its
  // functions lose `.visible` (so ptxas may inline them), names clashing with the module's are
  // renamed, and the rest is appended to the module.
  std::string probe_ptx;
  int max_ptx_isa = 0; // highest .version the JIT/ptxas takes, major*10+minor (90); 0: no cap
  int max_sm = 0;      // the GPU's SM (90): .target may not rise above it; 0: no cap
  // The userdata array's name: the agent gives each image its own, so that a loaded module
  // tells which image it came from.
  std::string userdata_symbol = kPtxUserdataSymbol;
};

// The module with the probes in. .version and .target become the higher of the module's and the
// probes'. Errors: a kernel or probe function not found, a module that does not parse, or a
// .version/.target above the caps.
Result<std::string> instrument_ptx(std::string_view module, const PtxInstrumentOptions &options);

// The highest PTX ISA (major*10+minor) of a CUDA release as cuDriverGetVersion gives it
// (13000 -> 90); 0 for releases before 11.0.
int ptx_isa_for_cuda(int cuda_version);

} // namespace gpubt::runtime
