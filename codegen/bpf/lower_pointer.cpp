// `*p` through bpf_probe_read_{user,kernel}, and the pointee size pointer arithmetic scales by.
#include "codegen/bpf/lower_pointer.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

uint32_t pointer_step(const Type &t) {
  if (t.kind != TypeKind::Pointer)
    return 1;
  const Type &pointee = t.elems[0];
  return pointee.size ? pointee.size : 1;
}

Val lower_deref(LowerCtx &c, const UnaryExpr &e) {
  llvm::Value *addr = lower_expr(c, *e.operand).v;
  uint32_t size = e.type.size && e.type.size <= 8 ? e.type.size : 8;
  llvm::Value *slot = stack_i64(c);
  c.b.CreateStore(c.b.getInt64(0), slot);
  bool user = c.ap->provider == Provider::Uprobe || c.ap->provider == Provider::Uretprobe;
  call_helper(c, user ? BPF_FUNC_probe_read_user : BPF_FUNC_probe_read_kernel,
              {slot, c.b.getInt32(size), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
  // Little-endian: the low `size` bytes of the zeroed slot hold the value.
  llvm::Value *raw = c.b.CreateLoad(c.b.getIntNTy(size * 8), slot);
  llvm::Value *wide = e.type.is_signed ? c.b.CreateSExt(raw, c.b.getInt64Ty())
                                       : c.b.CreateZExt(raw, c.b.getInt64Ty());
  return {wide};
}

} // namespace gpubt::codegen::bpf
