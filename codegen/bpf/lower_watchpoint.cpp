// Lowers the setup uprobe of a function-form watchpoint.
#include "codegen/bpf/lower_watchpoint.h"

#include <csignal>
#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/send_event.h"

namespace gpubt::codegen::bpf {

void lower_watchpoint_setup(LowerCtx &c, uint32_t watch_index, int arg, bool async) {
  llvm::Value *address = lower_arg(c, arg);
  send_event(c, abi::EventKind::WatchpointAttach, watch_index, 8, [&](llvm::Value *payload) {
    c.b.CreateAlignedStore(address, payload, llvm::Align(8));
  });
  if (!async) // bpf_send_signal: the whole process stops, so no write races the watchpoint
    call_helper(c, BPF_FUNC_send_signal, {c.b.getInt32(SIGSTOP)});
}

} // namespace gpubt::codegen::bpf
