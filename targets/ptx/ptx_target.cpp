// The PTX device target: LLVM's NVPTX back end (nvptx64-nvidia-cuda), PTX 8.0 for sm_90 by
// default, the version CUDA 12+ ptxas accepts with --compile-as-tools-patch.
#include "targets/ptx/ptx_target.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

#include "codegen/optimize_module.h"
#include "targets/ptx/ptx_probe_calls.h"

namespace gpubt::targets {

namespace {

using codegen::Dim;
using codegen::Special;
namespace I = llvm::Intrinsic;

const char *kTriple = "nvptx64-nvidia-cuda";
const char *kPtxFeatures = "+ptx80";

const llvm::Target *nvptx_target(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(kTriple), error);
}

llvm::Value *sreg(llvm::IRBuilder<> &b, I::ID id) {
  return b.CreateZExt(b.CreateIntrinsic(id, {}), b.getInt64Ty());
}

llvm::Value *by_dim(llvm::IRBuilder<> &b, Dim d, I::ID x, I::ID y, I::ID z) {
  return sreg(b, d == Dim::X ? x : d == Dim::Y ? y : z);
}

class PtxTarget : public codegen::DeviceTarget {
public:
  PtxTarget(std::unique_ptr<llvm::TargetMachine> tm) : tm_(std::move(tm)) {}

  std::string name() const override { return "ptx"; }

  void prepare_module(llvm::Module &m) const override {
    m.setTargetTriple(llvm::Triple(kTriple));
    m.setDataLayout(tm_->createDataLayout());
  }

  llvm::FunctionType *probe_type(llvm::LLVMContext &ctx) const override {
    return llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx),
                                   {llvm::PointerType::get(ctx, 0), llvm::Type::getInt64Ty(ctx)},
                                   false);
  }
  llvm::Value *probe_context(llvm::IRBuilder<> &b, llvm::Value *userdata) const override {
    return b.CreateAddrSpaceCast(userdata, b.getPtrTy(global_address_space()));
  }
  unsigned global_address_space() const override { return 1; }
  bool supports(abi::ProbePointKind kind) const override {
    return kind == abi::ProbePointKind::Entry || kind == abi::ProbePointKind::Exit ||
           kind == abi::ProbePointKind::MemoryAccess || kind == abi::ProbePointKind::Barrier;
  }
  void add_probe_entry(llvm::Module &m, llvm::Function &direct, const std::string &name,
                       uint32_t probe_bit) const override {
    add_masked_patch(m, direct, name, probe_bit, global_address_space());
  }
  void add_probe_calls(abi::DeviceCode &code,
                       std::vector<abi::DeviceProbeSpec> &probes) const override {
    add_dispatchers(code.bytes, probes);
  }

  llvm::Value *thread_index(llvm::IRBuilder<> &b, Dim d) const override {
    return by_dim(b, d, I::nvvm_read_ptx_sreg_tid_x, I::nvvm_read_ptx_sreg_tid_y,
                  I::nvvm_read_ptx_sreg_tid_z);
  }
  llvm::Value *block_index(llvm::IRBuilder<> &b, Dim d) const override {
    return by_dim(b, d, I::nvvm_read_ptx_sreg_ctaid_x, I::nvvm_read_ptx_sreg_ctaid_y,
                  I::nvvm_read_ptx_sreg_ctaid_z);
  }
  llvm::Value *block_dim(llvm::IRBuilder<> &b, Dim d) const override {
    return by_dim(b, d, I::nvvm_read_ptx_sreg_ntid_x, I::nvvm_read_ptx_sreg_ntid_y,
                  I::nvvm_read_ptx_sreg_ntid_z);
  }
  llvm::Value *grid_dim(llvm::IRBuilder<> &b, Dim d) const override {
    return by_dim(b, d, I::nvvm_read_ptx_sreg_nctaid_x, I::nvvm_read_ptx_sreg_nctaid_y,
                  I::nvvm_read_ptx_sreg_nctaid_z);
  }

  llvm::Value *special(llvm::IRBuilder<> &b, Special s) const override {
    switch (s) {
    case Special::LaneId:
      return sreg(b, I::nvvm_read_ptx_sreg_laneid);
    case Special::SmId:
      return sreg(b, I::nvvm_read_ptx_sreg_smid);
    case Special::Clock:
      return b.CreateIntrinsic(I::nvvm_read_ptx_sreg_clock64, {});
    case Special::GlobalTimer:
      return b.CreateIntrinsic(I::nvvm_read_ptx_sreg_globaltimer, {});
    case Special::ActiveMask:
      return b.CreateIntrinsic(I::nvvm_activemask, {});
    }
    llvm::report_fatal_error("BUG: no such Special");
  }

  llvm::Value *match_any(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v) const override {
    return b.CreateIntrinsic(I::nvvm_match_any_sync_i64, {mask, v});
  }
  llvm::Value *shuffle(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v,
                       llvm::Value *src) const override {
    return b.CreateIntrinsic(I::nvvm_shfl_sync_idx_i32, {mask, v, src, b.getInt32(0x1f)});
  }

  // A mov the optimizer cannot look into (side effects: each one stays where it is made).
  llvm::Value *opaque_pointer(llvm::IRBuilder<> &b, llvm::Value *p) const override {
    auto *i64 = b.getInt64Ty();
    auto *mov = llvm::InlineAsm::get(llvm::FunctionType::get(i64, {i64}, false),
                                     "mov.b64 $0, $1;", "=l,l", /*hasSideEffects=*/true);
    return b.CreateIntToPtr(b.CreateCall(mov, {b.CreatePtrToInt(p, i64)}), p->getType());
  }

  void warp_sync(llvm::IRBuilder<> &b, llvm::Value *mask) const override {
    b.CreateIntrinsic(I::nvvm_bar_warp_sync, {}, {mask});
  }
  llvm::Value *ballot(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *pred) const override {
    return b.CreateIntrinsic(I::nvvm_vote_ballot_sync, {mask, pred});
  }
  // cvta.shared / cvta.local: NVPTX's address spaces 3 and 5 cast to generic.
  llvm::Value *window_address(llvm::IRBuilder<> &b, llvm::Value *offset,
                              bool shared) const override {
    auto *p = b.CreateIntToPtr(offset, b.getPtrTy(shared ? 3 : 5));
    return b.CreatePtrToInt(b.CreateAddrSpaceCast(p, b.getPtrTy(0)), b.getInt64Ty());
  }

  void optimize(llvm::Module &m) const override { codegen::optimize_o2(m, tm_.get()); }

  Result<abi::DeviceCode> emit(llvm::Module &m) const override {
    llvm::SmallString<0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm_->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      return make_error("BUG: the NVPTX target cannot emit PTX");
    pm.run(m);
    return abi::DeviceCode{abi::DeviceFormat::Ptx, std::string(buf.str()), 0};
  }

private:
  std::unique_ptr<llvm::TargetMachine> tm_;
};

} // namespace

std::unique_ptr<codegen::DeviceTarget> make_ptx_target(const codegen::TargetOptions &options) {
  std::string error;
  const llvm::Target *target = nvptx_target(error);
  if (!target)
    return nullptr;
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(llvm::Triple(kTriple), options.arch, kPtxFeatures, opts,
                                  std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return nullptr;
  return std::make_unique<PtxTarget>(std::move(tm));
}

} // namespace gpubt::targets
