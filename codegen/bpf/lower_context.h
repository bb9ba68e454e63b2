// The state of lowering one probe function to BPF, and the BPF side of the lowering core's hooks
// (codegen/common/lowering.h): values in the per-CPU scratch area where large temporaries live
// (the BPF stack is only 512 bytes), maps, builtins and calls.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "codegen/bpf/lower_bpf.h"
#include "codegen/common/lowering.h"
#include "codegen/layout/map_layout.h"

namespace gpubt::codegen::bpf {

// Strings and tuples are a pointer to type.size bytes with the given alignment.
using Val = codegen::Value;

struct LowerCtx : codegen::Lowering {
  LowerCtx(llvm::Module &m) : Lowering(m) {}
  llvm::Value *regs = nullptr;    // the program's context argument
  llvm::Value *scratch = nullptr; // this CPU's scratch area (non-null past the entry check)
  uint32_t scratch_used = 0;
  uint32_t stack_temps_used = 0; // small temporaries placed on the stack instead (scratch_slot)
  // uretprobes of catalogued API functions: the argument words saved at entry (regs then stack
  // slots, see lower_api.h), or null.
  llvm::Value *saved_args = nullptr;

  const BpfCodegenOptions *opts = nullptr;
  bool skip_agent_threads = false; // return at once on gpubt's own threads (return_on_agent_thread)
  const frontend::AttachPoint *ap = nullptr;
  const abi::UsdtSite *usdt = nullptr; // usdt: the one site this function is for
  uint32_t probe_index = 0; // index into ProgramSpec::probes / probe_names
  abi::ProgramSpec *spec = nullptr;
  const layout::MapLayout *maps = nullptr;

protected: // lower_expr.cpp
  bool holds_in_memory(const frontend::Type &t) const override;
  llvm::Value *temp_buffer(uint32_t size, bool zeroed) override;
  llvm::Value *variable_slot(const frontend::Type &t) override;
  Val load(llvm::Value *ptr, uint32_t align, const frontend::Type &t) override;
  void store(llvm::Value *dst, uint32_t align, const frontend::Type &dst_t, Val src,
             const frontend::Type &src_t) override;
  Val string_value(const frontend::StringExpr &e) override;
  Val map_read(const frontend::MapExpr &m) override;
  void map_write(const frontend::MapExpr &m, Val v, const frontend::Type &v_type) override;
  bool map_aggregate(const frontend::MapExpr &m, const frontend::CallExpr &call) override;
  Val builtin_value(const frontend::BuiltinExpr &e) override;
  Val call_value(const frontend::CallExpr &e) override;
  Val deref_value(const frontend::UnaryExpr &e) override;
  Val address_of(const frontend::UnaryExpr &e) override;
  Val index_value(const frontend::IndexExpr &e) override;
  Val field_value(const frontend::FieldExpr &e) override; // args.NAME, records, through pointers
  std::optional<Val> memory_compare(const frontend::BinaryExpr &e, Val l, Val r) override;
  std::string operator_error(const frontend::BinaryExpr &e) override;
  // lower_for_map.cpp: for over a map, and over a range, in callbacks of a helper
  void lower_while(const frontend::WhileStmt &s) override;

private:
  struct LoopContext {
    llvm::AllocaInst *array = nullptr;
    llvm::Value *returned = nullptr;
  };
  std::map<llvm::Function *, LoopContext> loop_contexts_; // callback_loop's, per function
  void callback_loop(const frontend::BlockStmt &body, const std::vector<std::string> &loop_vars,
                     llvm::FunctionType *cb_ty, unsigned ctx_arg,
                     const std::function<void(llvm::Function *)> &fill,
                     const std::function<void(llvm::Function *, llvm::Value *)> &call);
};

} // namespace gpubt::codegen::bpf
