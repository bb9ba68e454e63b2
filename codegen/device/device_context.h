// The state of lowering one gpu probe into a patch function, and the IR helpers the device
// lowering files share (memory values, device atomics, the map table).
#pragma once
#include <map>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/device_target.h"
#include "codegen/layout/device_map_layout.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::codegen::device {

using layout::DeviceMap;

// Integers are i64 (normalized to their type); strings and tuples a generic pointer to
// type.size bytes (8-aligned).
struct DVal {
  llvm::Value *v = nullptr;
};

struct DevCtx {
  DevCtx(llvm::Module &m, const DeviceTarget &t)
      : mod(m), ctx(m.getContext()), b(m.getContext()), target(t) {}
  llvm::Module &mod;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  const DeviceTarget &target;
  llvm::Function *fn = nullptr;
  llvm::Value *userdata = nullptr; // struct gpubt_device_ctx *, in the global address space

  const frontend::SemanticInfo *sema = nullptr;
  const frontend::Probe *probe = nullptr;
  uint32_t probe_name_index = 0; // into ProgramSpec::probe_names (the `probe` builtin)
  abi::ProgramSpec *spec = nullptr;
  const std::map<std::string, DeviceMap> *maps = nullptr;
  std::map<std::string, llvm::Value *> vars; // alloca of 8 bytes or type.size bytes
  llvm::Value *last_thread = nullptr; // i64 0/1, counted once at the probe's start if used
  // --timeline: the clock the launch's last thread read for its launch record (0 elsewhere); that
  // thread's `nsecs` is this same reading, so the record's span is what the script measures.
  llvm::Value *launch_end_ns = nullptr;
  std::string error; // first error met; lowering goes on but the result is discarded
};

void set_error(DevCtx &c, std::string msg);
bool is_memory_type(const frontend::Type &t); // String, Tuple

// An alloca in the entry block, zeroed there; SIZE bytes, 8-aligned.
llvm::Value *local_buffer(DevCtx &c, uint32_t size);
llvm::Value *byte_ptr(DevCtx &c, llvm::Value *base, uint64_t offset);
llvm::Value *load_u64(DevCtx &c, llvm::Value *p);
void store_u64(DevCtx &c, llvm::Value *p, llvm::Value *v);
// A field of the per-launch context, zero-extended to i64.
llvm::Value *ctx_field(DevCtx &c, uint32_t offset, uint32_t size);
// A device address held in memory as a uint64, as a pointer in the global address space.
llvm::Value *global_ptr(DevCtx &c, llvm::Value *address);

// Value of type SRC_T stored as DST_T at DST (8-aligned base, OFFSET bytes in): integers
// resized, strings cut or NUL-padded, tuples element by element.
void store_value(DevCtx &c, llvm::Value *dst, const frontend::Type &dst_t, DVal src,
                 const frontend::Type &src_t);
DVal load_value(DevCtx &c, llvm::Value *ptr, const frontend::Type &t);

// Device-scope atomics (atom.*.gpu / ld.acquire.gpu / st.release.gpu).
llvm::Value *atomic_rmw(DevCtx &c, llvm::AtomicRMWInst::BinOp op, llvm::Value *p, llvm::Value *v);
llvm::Value *load_relaxed(DevCtx &c, llvm::Value *p); // a u64 other SMs update: no stale L1
llvm::Value *load_acquire(DevCtx &c, llvm::Value *p);
void store_release(DevCtx &c, llvm::Value *p, llvm::Value *v);
// {old, success}
std::pair<llvm::Value *, llvm::Value *> compare_exchange(DevCtx &c, llvm::Value *p,
                                                         llvm::Value *expected, llvm::Value *v);

// device_expr.cpp
DVal lower_expr(DevCtx &c, const frontend::Expr &e);
llvm::Value *device_nsecs(DevCtx &c); // `nsecs`: %globaltimer on the host's clock
llvm::Value *probe_nsecs(DevCtx &c);  // `nsecs` in a probe body (see launch_end_ns)
llvm::Value *truthy(DevCtx &c, DVal v);
void lower_block(DevCtx &c, const frontend::BlockStmt &block);

// device_maps.cpp
const DeviceMap *find_map(DevCtx &c, const std::string &name);
DVal read_map(DevCtx &c, const frontend::MapExpr &m);
void write_map(DevCtx &c, const frontend::MapExpr &m, DVal v, const frontend::Type &v_type);
// M[keys] = AGG(v), aggregated across the warp first (v null for count).
void update_aggregate(DevCtx &c, const frontend::MapExpr &m, llvm::Value *v);

// device_printf.cpp
void lower_printf(DevCtx &c, const frontend::CallExpr &call);
// --timeline: the launch's GpuLaunchRecord (launch_start to END_NS, the end as the last thread
// read it; null: now), from its last thread.
void send_launch_record(DevCtx &c, llvm::Value *end_ns = nullptr);

} // namespace gpubt::codegen::device
