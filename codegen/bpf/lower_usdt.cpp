// USDT argument specs (x86-64 AT&T operands) -> pt_regs loads and user-memory reads.
#include "codegen/bpf/lower_usdt.h"

#include <linux/bpf.h>

#include "codegen/bpf/ir_helpers.h"

namespace gpubt::codegen::bpf {
namespace {

struct RegRow {
  const char *names[4]; // 64-, 32-, 16-, 8-bit names
  uint32_t offset;      // in the x86-64 kernel's struct pt_regs
};
const RegRow kRegs[] = {
    {{"rax", "eax", "ax", "al"}, 80},    {{"rbx", "ebx", "bx", "bl"}, 40},
    {{"rcx", "ecx", "cx", "cl"}, 88},    {{"rdx", "edx", "dx", "dl"}, 96},
    {{"rsi", "esi", "si", "sil"}, 104},  {{"rdi", "edi", "di", "dil"}, 112},
    {{"rbp", "ebp", "bp", "bpl"}, 32},   {{"rsp", "esp", "sp", "spl"}, 152},
    {{"r8", "r8d", "r8w", "r8b"}, 72},   {{"r9", "r9d", "r9w", "r9b"}, 64},
    {{"r10", "r10d", "r10w", "r10b"}, 56}, {{"r11", "r11d", "r11w", "r11b"}, 48},
    {{"r12", "r12d", "r12w", "r12b"}, 24}, {{"r13", "r13d", "r13w", "r13b"}, 16},
    {{"r14", "r14d", "r14w", "r14b"}, 8}, {{"r15", "r15d", "r15w", "r15b"}, 0},
    {{"rip", "eip", "ip", ""}, 128},
};
// ah, bh, ch, dh: the second byte of a register.
const struct {
  const char *name;
  uint32_t offset;
} kHighBytes[] = {{"ah", 80}, {"bh", 40}, {"ch", 88}, {"dh", 96}};

// The register's whole 64-bit value (its sub-register's bits are the low ones, or, for the
// high-byte registers, bits 8-15).
llvm::Value *read_reg(LowerCtx &c, const std::string &name) {
  for (const auto &r : kRegs)
    for (const char *n : r.names)
      if (name == n)
        return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, c.regs, r.offset),
                                     llvm::Align(8));
  for (const auto &h : kHighBytes)
    if (name == h.name)
      return c.b.CreateLShr(c.b.CreateAlignedLoad(c.b.getInt64Ty(),
                                                  byte_ptr(c, c.regs, h.offset), llvm::Align(8)),
                            8);
  set_error(c, "usdt probe " + c.spec->probes[c.probe_index].name + ": unknown register %" +
                   name + " in its argument spec");
  return c.b.getInt64(0);
}

llvm::Value *extend(LowerCtx &c, llvm::Value *v, const abi::UsdtArg &a) {
  if (a.size >= 8)
    return v;
  auto *narrow = c.b.CreateTrunc(v, llvm::IntegerType::get(c.ctx, a.size * 8));
  return a.is_signed ? c.b.CreateSExt(narrow, c.b.getInt64Ty())
                     : c.b.CreateZExt(narrow, c.b.getInt64Ty());
}

} // namespace

llvm::Value *usdt_arg(LowerCtx &c, int n) {
  const auto &args = c.usdt->args;
  if (n < 0 || size_t(n) >= args.size()) {
    set_error(c, "couldn't get argument " + std::to_string(n) + " for " + c.usdt->path + ":" +
                     c.usdt->provider + ":" + c.usdt->name);
    return c.b.getInt64(0);
  }
  const abi::UsdtArg &a = args[n];
  switch (a.kind) {
  case abi::UsdtArg::Const:
    return extend(c, c.b.getInt64(a.value), a);
  case abi::UsdtArg::Reg:
    return extend(c, read_reg(c, a.reg), a);
  case abi::UsdtArg::Mem:
    break;
  }
  llvm::Value *addr = c.b.CreateAdd(read_reg(c, a.reg), c.b.getInt64(a.value));
  if (!a.index_reg.empty())
    addr = c.b.CreateAdd(addr, c.b.CreateMul(read_reg(c, a.index_reg), c.b.getInt64(a.scale)));
  llvm::Value *slot = stack_i64(c);
  c.b.CreateAlignedStore(c.b.getInt64(0), slot, llvm::Align(8));
  call_helper(c, BPF_FUNC_probe_read_user,
              {slot, c.b.getInt32(a.size), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
  return extend(c, c.b.CreateAlignedLoad(c.b.getInt64Ty(), slot, llvm::Align(8)), a);
}

} // namespace gpubt::codegen::bpf
