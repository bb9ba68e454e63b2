// The patch functions and the dispatchers as PTX text: the calling convention of the patch
// functions (two .b64 params, a .b32 result), one call per probe in probe order.
#include "targets/ptx/ptx_probe_calls.h"

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

std::string dispatcher(const std::string &name, const std::vector<std::string> &callees) {
  std::ostringstream o;
  o << "\n.visible .func (.param .b32 func_retval0) " << name << "(\n\t.param .b64 " << name
    << "_param_0,\n\t.param .b64 " << name << "_param_1\n)\n{\n"
    << "\t.reg .b32 \t%r<2>;\n\t.reg .b64 \t%rd<3>;\n"
    << "\tld.param.u64 \t%rd1, [" << name << "_param_0];\n"
    << "\tld.param.u64 \t%rd2, [" << name << "_param_1];\n";
  for (const auto &callee : callees)
    o << "\t{\n\t.param .b64 param0;\n\tst.param.b64 \t[param0], %rd1;\n"
      << "\t.param .b64 param1;\n\tst.param.b64 \t[param1], %rd2;\n"
      << "\t.param .b32 retval0;\n\tcall (retval0), " << callee << ", (param0, param1);\n\t}\n";
  o << "\tmov.u32 \t%r1, 0;\n\tst.param.b32 \t[func_retval0], %r1;\n\tret;\n}\n";
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
    ptx += dispatcher(name, callees);
    for (auto &p : probes)
      if (p.point.kind == kind)
        p.patch = name;
  }
}

} // namespace gpubt::targets
