// The one interface a device back end implements (PTX now, SPIR-V later). Device probe lowering
// in codegen/device is written against it; each target's header declares only a factory.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::codegen {

enum class Dim { X, Y, Z };

// Per-thread values with no portable IR form. Each answers an i64 (ActiveMask: an i32 lane mask),
// as do the Dim accessors below.
enum class Special {
  LaneId,      // lane in the warp (subgroup)
  SmId,        // the multiprocessor running the thread
  Clock,       // the SM's cycle counter
  GlobalTimer, // ns, one clock for the whole GPU
  ActiveMask,  // lanes executing this instruction together
};

struct TargetOptions {
  std::string arch = "sm_90"; // PTX: the SM the code is for; the agent may re-target at load
};

class DeviceTarget {
public:
  virtual ~DeviceTarget() = default;
  virtual std::string name() const = 0;                   // "ptx"
  virtual void prepare_module(llvm::Module &m) const = 0; // triple, data layout
  // How a probe is called: its function type, whose first parameter carries the per-launch
  // context (PTX: the Compute Sanitizer patch signature, userdata first), and that context as
  // a pointer in global_address_space() inside the probe.
  virtual llvm::FunctionType *probe_type(llvm::LLVMContext &ctx) const = 0;
  virtual llvm::Value *probe_context(llvm::IRBuilder<> &b, llvm::Value *first_arg) const = 0;
  virtual unsigned global_address_space() const = 0; // where device memory is addressed
  // Which probe points it lowers (abi/probe_point.h); a probe at another one is an error.
  virtual bool supports(abi::ProbePointKind kind) const = 0;
  // How an injector calls probe PROBE_BIT here. DIRECT (probe_type, named NAME +
  // GPUBT_PROBE_DIRECT_SUFFIX) runs its body for the context it is given, and is what an injector
  // calls in a kernel the probe matches. A target whose injector also runs probes in kernels they
  // do not match adds what filters them (PTX: NAME, the Compute Sanitizer patch).
  virtual void add_probe_entry(llvm::Module &, llvm::Function &direct, const std::string &name,
                               uint32_t probe_bit) const {}
  // After emit(): what an injector needs besides the probes' functions to call PROBES from CODE
  // (PTX: a dispatcher per point several probes share, and each probe's `patch`).
  virtual void add_probe_calls(abi::DeviceCode &code,
                               std::vector<abi::DeviceProbeSpec> &probes) const {}
  virtual llvm::Value *thread_index(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *block_index(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *block_dim(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *grid_dim(llvm::IRBuilder<> &b, Dim d) const = 0;
  virtual llvm::Value *special(llvm::IRBuilder<> &b, Special s) const = 0;
  // Why S cannot be read on this target (a probe using it is an error), or "" when it can.
  virtual std::string unavailable(Special) const { return ""; }
  // Threads per warp (subgroup), i64.
  virtual llvm::Value *warp_size(llvm::IRBuilder<> &b) const { return b.getInt64(32); }
  // This lane's bit in an ActiveMask (a subgroup wider than 32 works in 32-lane halves), i64.
  virtual llvm::Value *mask_lane(llvm::IRBuilder<> &b) const { return special(b, Special::LaneId); }
  // Warp collectives for aggregation (every lane in MASK executes them): the i32 mask of lanes
  // in MASK holding the same i64 V, and lane SRC's (a mask_lane) i32 V.
  virtual llvm::Value *match_any(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v) const = 0;
  virtual llvm::Value *shuffle(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v,
                               llvm::Value *src) const = 0;
  // The i32 mask of lanes in MASK whose i1 PRED holds (every lane in MASK executes it); null on a
  // target without one (a probe needing it is an error).
  virtual llvm::Value *ballot(llvm::IRBuilder<> &, llvm::Value *mask, llvm::Value *pred) const {
    return nullptr;
  }
  // Brings the lanes of MASK (all of which reach it) back together, so the code after a probe
  // (the next probe at the same instruction, the kernel's own) runs as converged as before it.
  // Called on targets whose lanes may part (not lockstep_lanes).
  virtual void warp_sync(llvm::IRBuilder<> &, llvm::Value *mask) const {}
  // An i64 offset in the shared (SHARED) or local memory window as a generic i64 address; null on
  // a target without such windows.
  virtual llvm::Value *window_address(llvm::IRBuilder<> &, llvm::Value *offset,
                                      bool shared) const {
    return nullptr;
  }
  // Whether lanes of a warp/subgroup only run in lockstep (Vulkan promises no independent
  // forward progress; lavapipe has none): then no lane may wait for another one.
  virtual bool lockstep_lanes() const { return false; }
  // Whether updates under launch-uniform keys may use gpubt_device_ctx::slot_cache.
  virtual bool slot_cache() const { return true; }
  // The pointer P as a value the optimizer cannot see through: what is loaded through it is
  // loaded again there, not kept in registers from an earlier load through P.
  virtual llvm::Value *opaque_pointer(llvm::IRBuilder<> &, llvm::Value *p) const { return p; }
  virtual void optimize(llvm::Module &m) const = 0;            // the target's O2 pipeline
  virtual Result<abi::DeviceCode> emit(llvm::Module &m) const = 0; // PTX text, SPIR-V words
};

} // namespace gpubt::codegen
