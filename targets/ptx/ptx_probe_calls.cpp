// The patch functions, the dispatchers and the memory probes' per-space patches as PTX text: the
// calling convention of the patch functions (the point's parameters, a .b32 result), one call
// per probe in probe order.
#include "targets/ptx/ptx_probe_calls.h"

#include <algorithm>
#include <cstddef>
#include <sstream>

#include <llvm/IR/IRBuilder.h>

#include "runtime/abi/device_abi.h"

namespace gpubt::targets {

void add_masked_patch(llvm::Module &m, llvm::Function &direct, const std::string &name,
                      uint32_t probe_bit, unsigned global_address_space) {
  auto &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *checked =
      llvm::Function::Create(direct.getFunctionType(), llvm::Function::ExternalLinkage, name, m);
  checked->addFnAttr(llvm::Attribute::NoInline);
  checked->addFnAttr(llvm::Attribute::NoUnwind);
  auto *first = llvm::BasicBlock::Create(ctx, "entry", checked);
  auto *run = llvm::BasicBlock::Create(ctx, "run", checked);
  auto *skip = llvm::BasicBlock::Create(ctx, "skip", checked);
  b.SetInsertPoint(skip);
  b.CreateRet(b.getInt32(GPUBT_PATCH_SUCCESS));
  b.SetInsertPoint(first);
  llvm::Value *arg = checked->getArg(0);
  auto *check = llvm::BasicBlock::Create(ctx, "check", checked);
  b.CreateCondBr(b.CreateIsNull(arg), skip, check);
  b.SetInsertPoint(check);
  auto *ud = b.CreateAddrSpaceCast(arg, b.getPtrTy(global_address_space));
  auto *mask = b.CreateAlignedLoad(
      b.getInt64Ty(),
      b.CreateGEP(b.getInt8Ty(), ud, b.getInt64(offsetof(gpubt_device_ctx, probe_mask))),
      llvm::Align(8));
  b.CreateCondBr(b.CreateICmpNE(b.CreateAnd(b.CreateLShr(mask, probe_bit), 1), b.getInt64(0)),
                 run, skip);
  b.SetInsertPoint(run);
  std::vector<llvm::Value *> args;
  for (auto &a : checked->args())
    args.push_back(&a);
  b.CreateRet(b.CreateCall(&direct, args));
}

namespace {

// A function NAME with KIND's parameters calling each of CALLEES with them, the memory flags
// ORed with OR_FLAGS; it answers success.
std::string forwarder(const std::string &name, abi::ProbePointKind kind,
                      const std::vector<std::string> &callees, uint32_t or_flags = 0) {
  auto bits = abi::probe_param_bits(kind);
  auto reg = [](int b, size_t i) {
    return std::string(b == 64 ? "%rd" : "%r") + std::to_string(i + 1);
  };
  std::ostringstream o;
  o << "\n.visible .func (.param .b32 func_retval0) " << name << "(";
  for (size_t i = 0; i < bits.size(); ++i)
    o << (i ? "," : "") << "\n\t.param .b" << bits[i] << " " << name << "_param_" << i;
  o << "\n)\n{\n\t.reg .b32 \t%r<" << bits.size() + 2 << ">;\n\t.reg .b64 \t%rd<"
    << bits.size() + 1 << ">;\n";
  for (size_t i = 0; i < bits.size(); ++i)
    o << "\tld.param.u" << bits[i] << " \t" << reg(bits[i], i) << ", [" << name << "_param_" << i
      << "];\n";
  if (or_flags) {
    std::string flags = reg(32, abi::kMemoryFlagsParam);
    o << "\tor.b32 \t" << flags << ", " << flags << ", " << or_flags << ";\n";
  }
  for (const auto &callee : callees) {
    o << "\t{\n";
    for (size_t i = 0; i < bits.size(); ++i)
      o << "\t.param .b" << bits[i] << " param" << i << ";\n\tst.param.b" << bits[i] << " \t[param"
        << i << "], " << reg(bits[i], i) << ";\n";
    o << "\t.param .b32 retval0;\n\tcall (retval0), " << callee << ", (";
    for (size_t i = 0; i < bits.size(); ++i)
      o << (i ? ", " : "") << "param" << i;
    o << ");\n\t}\n";
  }
  o << "\tmov.u32 \t%r" << bits.size() + 1 << ", 0;\n\tst.param.b32 \t[func_retval0], %r"
    << bits.size() + 1 << ";\n\tret;\n}\n";
  return o.str();
}

} // namespace

void add_dispatchers(std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes) {
  for (auto &p : probes)
    p.patch = p.function;
  for (int k = 0; k < abi::kProbePointKinds; ++k) {
    auto kind = static_cast<abi::ProbePointKind>(k);
    std::vector<std::string> callees;
    for (const auto &p : probes)
      if (p.point.kind == kind)
        callees.push_back(p.function);
    if (callees.size() < 2)
      continue;
    std::string name = std::string("gpubt_dispatch_") + abi::probe_point_name(kind);
    ptx += forwarder(name, kind, callees);
    for (auto &p : probes)
      if (p.point.kind == kind)
        p.patch = name;
  }
  // The Sanitizer patches a memory probe once per instruction kind, with flags that do not say
  // the space: PATCH_global, PATCH_shared and PATCH_local add it (the PTX inserter passes it).
  std::vector<std::string> wrapped;
  for (const auto &p : probes) {
    if (p.point.kind != abi::ProbePointKind::MemoryAccess ||
        std::find(wrapped.begin(), wrapped.end(), p.patch) != wrapped.end())
      continue;
    wrapped.push_back(p.patch);
    for (uint32_t bit : {abi::AccessGlobal, abi::AccessShared, abi::AccessLocal})
      ptx += forwarder(abi::memory_space_patch(p.patch, bit), p.point.kind, {p.patch},
                       abi::memory_space_flag(bit));
  }
}

} // namespace gpubt::targets
