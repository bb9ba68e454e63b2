// The SPIR-V device target: LLVM's SPIR-V back end. The probes' thread coordinates are their
// arguments (runtime/abi/device_abi.h: the shader that calls them reads its builtins); the
// Vulkan flavour's atomics and pointers are finished by to_vulkan_flavour.
#include "targets/spirv/spirv_target.h"

#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsSPIRV.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/optimize_module.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/spirv_words.h"
#include "targets/spirv/vulkan_flavour.h"

namespace gpubt::targets {

namespace {

using codegen::Dim;
using codegen::Special;

const llvm::Target *spirv_backend(const llvm::Triple &triple, std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeSPIRVTargetInfo();
    LLVMInitializeSPIRVTarget();
    LLVMInitializeSPIRVTargetMC();
    LLVMInitializeSPIRVAsmPrinter();
  });
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

llvm::Value *arg(llvm::IRBuilder<> &b, unsigned i) {
  return b.CreateZExt(b.GetInsertBlock()->getParent()->getArg(i), b.getInt64Ty());
}
unsigned dim(Dim d) { return d == Dim::X ? 0 : d == Dim::Y ? 1 : 2; }

// The SPIR-V opcode an atomic instruction becomes (see vulkan_flavour.h).
uint32_t atomic_opcode(llvm::AtomicRMWInst::BinOp op) {
  using B = llvm::AtomicRMWInst;
  switch (op) {
  case B::Xchg: return 229;
  case B::Add: return 234;
  case B::Sub: return 235;
  case B::Min: return 236;
  case B::UMin: return 237;
  case B::Max: return 238;
  case B::UMax: return 239;
  case B::And: return 240;
  case B::Or: return 241;
  case B::Xor: return 242;
  default: return 0;
  }
}

// Every atomic instruction -> a call of its placeholder, which to_vulkan_flavour turns into
// the SPIR-V atomic. False with WHY when one has no SPIR-V form.
bool atomics_to_placeholders(llvm::Module &m, std::string &why) {
  std::vector<llvm::Instruction *> atomics;
  for (auto &f : m)
    for (auto &bb : f)
      for (auto &i : bb)
        if (i.isAtomic() && !llvm::isa<llvm::FenceInst>(i))
          atomics.push_back(&i);
  for (auto *i : atomics) {
    llvm::IRBuilder<> b(i);
    uint32_t opcode = 0;
    llvm::Type *ty = nullptr;
    std::vector<llvm::Value *> args;
    if (auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(i)) {
      opcode = atomic_opcode(rmw->getOperation());
      ty = rmw->getType();
      args = {rmw->getPointerOperand(), rmw->getValOperand()};
    } else if (auto *x = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(i)) {
      opcode = spirv::OpAtomicCompareExchange;
      ty = x->getNewValOperand()->getType();
      args = {x->getPointerOperand(), x->getCompareOperand(), x->getNewValOperand()};
    } else if (auto *l = llvm::dyn_cast<llvm::LoadInst>(i)) {
      opcode = spirv::OpAtomicLoad;
      ty = l->getType();
      args = {l->getPointerOperand()};
    } else if (auto *s = llvm::dyn_cast<llvm::StoreInst>(i)) {
      opcode = spirv::OpAtomicStore;
      ty = s->getValueOperand()->getType();
      args = {s->getPointerOperand(), s->getValueOperand()};
    }
    unsigned bits = ty && ty->isIntegerTy() ? ty->getIntegerBitWidth() : 0;
    if (!opcode || (bits != 32 && bits != 64)) {
      why = "an atomic operation the Vulkan flavour has no form for";
      return false;
    }
    std::vector<llvm::Type *> params;
    for (auto *a : args)
      params.push_back(a->getType());
    bool is_store = opcode == spirv::OpAtomicStore;
    auto *fty = llvm::FunctionType::get(is_store ? b.getVoidTy() : ty, params, false);
    auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(i);
    bool acq_rel = rmw && llvm::isAtLeastOrStrongerThan(rmw->getOrdering(),
                                                        llvm::AtomicOrdering::AcquireRelease);
    auto callee = m.getOrInsertFunction(std::string(kAtomicPlaceholder) + std::to_string(opcode) +
                                            "_" + std::to_string(bits) +
                                            (acq_rel ? kAcqRelSuffix : ""),
                                        fty);
    llvm::Value *call = b.CreateCall(callee, args);
    if (auto *x = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(i)) {
      llvm::Value *pair = llvm::PoisonValue::get(x->getType());
      pair = b.CreateInsertValue(pair, call, 0);
      call = b.CreateInsertValue(pair, b.CreateICmpEQ(call, x->getCompareOperand()), 1);
    }
    if (!is_store)
      i->replaceAllUsesWith(call);
    i->eraseFromParent();
  }
  return true;
}

// LLVM's Vulkan flavour cannot select llvm.cttz; the lowest set bit's index is the count of the
// ones below it.
void cttz_to_bit_count(llvm::Module &m) {
  std::vector<llvm::IntrinsicInst *> calls;
  for (auto &f : m)
    for (auto &bb : f)
      for (auto &i : bb)
        if (auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(&i); ii && ii->getIntrinsicID() == llvm::Intrinsic::cttz)
          calls.push_back(ii);
  for (auto *call : calls) {
    llvm::IRBuilder<> b(call);
    llvm::Value *x = call->getArgOperand(0);
    auto *below = b.CreateSub(b.CreateAnd(x, b.CreateNeg(x)), llvm::ConstantInt::get(x->getType(), 1));
    call->replaceAllUsesWith(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, below));
    call->eraseFromParent();
  }
}

// A loop's preheader entered from a conditional branch is folded into that branch's block by
// LLVM's SPIR-V back end with its instructions after the OpSelectionMerge, which spirv-val
// refuses. They move up into the branching block first: computing them on both paths changes
// nothing.
void hoist_out_of_preheaders(llvm::Function &f) {
  llvm::DominatorTree dt(f);
  llvm::LoopInfo li(dt);
  for (llvm::Loop *loop : li.getLoopsInPreorder()) {
    llvm::BasicBlock *pre = loop->getLoopPreheader();
    if (!pre)
      continue;
    llvm::BasicBlock &bb = *pre;
    auto *pred = bb.getSinglePredecessor();
    auto *br = llvm::dyn_cast<llvm::BranchInst>(bb.getTerminator());
    if (!pred || !br || br->isConditional())
      continue;
    auto *pred_br = llvm::dyn_cast<llvm::BranchInst>(pred->getTerminator());
    if (!pred_br || !pred_br->isConditional())
      continue;
    std::vector<llvm::Instruction *> movable;
    for (auto &i : bb) {
      bool inputs_above = llvm::all_of(i.operands(), [&](const llvm::Use &u) {
        auto *def = llvm::dyn_cast<llvm::Instruction>(u.get());
        return !def || def->getParent() != &bb || llvm::is_contained(movable, def);
      });
      if (&i != br && inputs_above && !llvm::isa<llvm::PHINode>(i) && !llvm::isa<llvm::CallBase>(i) &&
          llvm::isSafeToSpeculativelyExecute(&i))
        movable.push_back(&i);
    }
    for (auto *i : movable)
      i->moveBefore(pred_br->getIterator());
  }
}

// An inbounds GEP becomes OpInBoundsPtrAccessChain, which LLVM's Vulkan flavour refuses
// ("Unable to meet SPIR-V requirements"); the plain one, OpPtrAccessChain, is what
// PhysicalStorageBuffer pointers take.
void drop_inbounds(llvm::Module &m) {
  for (auto &f : m)
    for (auto &bb : f)
      for (auto &i : bb)
        if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&i))
          gep->setNoWrapFlags(llvm::GEPNoWrapFlags::none());
}

// Every value a loop defines and code after the loop uses goes through a local variable.
// Lavapipe computes a divergent loop's values for all lanes on every pass, so a lane that left
// early would read the value of another lane's last pass (a map's claiming lanes all wrote the
// slot the last of them found). Its stores to locals are per lane. LLVM's SPIR-V back end drops
// LCSSA phis, so they cannot carry the values.
void loop_exit_values_through_locals(llvm::Function &f) {
  llvm::DominatorTree dt(f);
  llvm::LoopInfo li(dt);
  llvm::IRBuilder<> eb(&*f.getEntryBlock().getFirstInsertionPt());
  for (llvm::Loop *loop : li.getLoopsInPreorder()) {
    std::vector<llvm::Instruction *> defs;
    for (auto *bb : loop->blocks())
      for (auto &i : *bb)
        defs.push_back(&i);
    for (auto *def : defs) {
      std::vector<llvm::Use *> outside;
      for (auto &use : def->uses()) {
        auto *user = llvm::cast<llvm::Instruction>(use.getUser());
        auto *at = llvm::isa<llvm::PHINode>(user)
                       ? llvm::cast<llvm::PHINode>(user)->getIncomingBlock(use)
                       : user->getParent();
        if (!loop->contains(at))
          outside.push_back(&use);
      }
      llvm::Type *ty = def->getType();
      if (outside.empty() || (!ty->isIntegerTy() && !ty->isPointerTy()))
        continue;
      auto *i64 = eb.getInt64Ty();
      auto *slot = eb.CreateAlloca(i64);
      llvm::IRBuilder<> b(def->getParent(), llvm::isa<llvm::PHINode>(def)
                                               ? def->getParent()->getFirstInsertionPt()
                                               : std::next(def->getIterator()));
      // Volatile: the back end's own mem2reg would make them the values again.
      b.CreateStore(ty->isPointerTy() ? b.CreatePtrToInt(def, i64) : b.CreateZExt(def, i64), slot,
                    /*isVolatile=*/true);
      for (auto *use : outside) {
        auto *user = llvm::cast<llvm::Instruction>(use->getUser());
        llvm::IRBuilder<> ub(llvm::isa<llvm::PHINode>(user)
                                 ? llvm::cast<llvm::PHINode>(user)->getIncomingBlock(*use)->getTerminator()
                                 : user);
        llvm::Value *v = ub.CreateLoad(i64, slot, /*isVolatile=*/true);
        v = ty->isPointerTy() ? ub.CreateIntToPtr(v, ty) : ub.CreateTrunc(v, ty);
        use->set(v);
      }
    }
  }
}

class SpirvTarget : public codegen::DeviceTarget {
public:
  SpirvTarget(SpirvFlavour flavour, llvm::Triple triple, std::unique_ptr<llvm::TargetMachine> tm)
      : flavour_(flavour), triple_(std::move(triple)), tm_(std::move(tm)) {}

  std::string name() const override {
    return flavour_ == SpirvFlavour::Vulkan ? "spirv-vulkan" : "spirv-opencl";
  }

  void prepare_module(llvm::Module &m) const override {
    m.setTargetTriple(triple_);
    m.setDataLayout(tm_->createDataLayout());
  }

  llvm::FunctionType *probe_type(llvm::LLVMContext &ctx) const override {
    std::vector<llvm::Type *> params(GPUBT_SPIRV_ARGS, llvm::Type::getInt32Ty(ctx));
    params[0] = params[1] = llvm::Type::getInt64Ty(ctx);
    return llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx), params, false);
  }
  llvm::Value *probe_context(llvm::IRBuilder<> &b, llvm::Value *ctx) const override {
    return b.CreateIntToPtr(ctx, b.getPtrTy(global_address_space()));
  }
  // The caller (the Vulkan layer, an OpenCL kernel) calls probe N's _direct function only where
  // N matches, at entry or before each return: no probe_mask test (and LLVM's structurizer
  // mis-nested that test once _direct was inlined into it), no dispatchers.
  bool supports(abi::ProbePointKind kind) const override {
    return kind == abi::ProbePointKind::Entry || kind == abi::ProbePointKind::Exit;
  }
  // LLVM's Vulkan flavour addresses StorageBuffer (11); to_vulkan_flavour makes it
  // PhysicalStorageBuffer. OpenCL: CrossWorkgroup (1).
  unsigned global_address_space() const override {
    return flavour_ == SpirvFlavour::Vulkan ? 11 : 1;
  }

  llvm::Value *thread_index(llvm::IRBuilder<> &b, Dim d) const override {
    return arg(b, GPUBT_SPIRV_ARG_LOCAL_ID + dim(d));
  }
  llvm::Value *block_index(llvm::IRBuilder<> &b, Dim d) const override {
    return arg(b, GPUBT_SPIRV_ARG_WORKGROUP_ID + dim(d));
  }
  llvm::Value *block_dim(llvm::IRBuilder<> &b, Dim d) const override {
    return arg(b, GPUBT_SPIRV_ARG_WORKGROUP_SIZE + dim(d));
  }
  llvm::Value *grid_dim(llvm::IRBuilder<> &b, Dim d) const override {
    return arg(b, GPUBT_SPIRV_ARG_NUM_WORKGROUPS + dim(d));
  }

  // Aggregation works on 32-lane masks: a subgroup wider than 32 (AMD's wave64) works in halves,
  // the lanes of each half together.
  llvm::Value *special(llvm::IRBuilder<> &b, Special s) const override {
    switch (s) {
    case Special::LaneId:
      return arg(b, GPUBT_SPIRV_ARG_SUBGROUP_LOCAL_ID);
    case Special::SmId: // no SPIR-V form: spreads striped maps over 256 entries
      return b.CreateAnd(arg(b, GPUBT_SPIRV_ARG_WORKGROUP_ID), 255);
    case Special::Clock:
    case Special::GlobalTimer:
      return read_clock(b, s);
    case Special::ActiveMask:
      return ballot(b, b.getTrue());
    }
    llvm::report_fatal_error("BUG: no such Special");
  }
  llvm::Value *warp_size(llvm::IRBuilder<> &b) const override {
    return arg(b, GPUBT_SPIRV_ARG_SUBGROUP_SIZE);
  }
  llvm::Value *mask_lane(llvm::IRBuilder<> &b) const override {
    return b.CreateAnd(special(b, Special::LaneId), 31);
  }
  // Vulkan: `nsecs` is the Device-scope clock (shaderDeviceClock), which the layer measures
  // against CLOCK_MONOTONIC; `clock` the Subgroup-scope one (shaderSubgroupClock), a counter
  // like CUDA's per-SM %clock64. The OpenCL flavour runs nowhere here to measure it.
  std::string unavailable(Special s) const override {
    if ((s != Special::Clock && s != Special::GlobalTimer) || flavour_ == SpirvFlavour::Vulkan)
      return "";
    return std::string(s == Special::Clock ? "clock" : "nsecs") +
           " cannot be read in SPIR-V kernels for OpenCL / Level Zero";
  }

  // SPIR-V has no match: one pass per distinct value among MASK's lanes, each pass led by the
  // lowest lane not yet matched. Every lane of MASK runs every pass (the passes left are the same
  // for all of them), so no lane leaves the loop early: lavapipe mis-runs loops that some lanes
  // of a subgroup have left. A value the whole mask shares, the usual key, takes no loop.
  llvm::Value *match_any(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v) const override {
    llvm::Function *fn = b.GetInsertBlock()->getParent();
    auto &ctx = b.getContext();
    auto *same = same_as_lane(b, v, lowest(b, mask));
    auto *uniform = b.CreateICmpEQ(b.CreateAnd(ballot(b, same), mask), mask);
    auto *pre = b.GetInsertBlock();
    auto *loop = llvm::BasicBlock::Create(ctx, "match", fn);
    auto *done = llvm::BasicBlock::Create(ctx, "match.done", fn);
    b.CreateCondBr(uniform, done, loop);

    b.SetInsertPoint(loop);
    auto *left = b.CreatePHI(b.getInt32Ty(), 2);
    auto *mine = b.CreatePHI(b.getInt32Ty(), 2);
    left->addIncoming(mask, pre);
    mine->addIncoming(b.getInt32(0), pre);
    auto *matches = same_as_lane(b, v, lowest(b, left));
    auto *group = b.CreateAnd(ballot(b, matches), left);
    auto *mine2 = b.CreateSelect(matches, group, mine);
    auto *left2 = b.CreateAnd(left, b.CreateNot(group));
    left->addIncoming(left2, loop);
    mine->addIncoming(mine2, loop);
    b.CreateCondBr(b.CreateICmpEQ(left2, b.getInt32(0)), done, loop);

    b.SetInsertPoint(done);
    auto *out = b.CreatePHI(b.getInt32Ty(), 2);
    out->addIncoming(mask, pre);
    out->addIncoming(mine2, loop);
    return out;
  }
  llvm::Value *shuffle(llvm::IRBuilder<> &b, llvm::Value *, llvm::Value *v,
                       llvm::Value *src) const override {
    auto *half = b.CreateShl(b.CreateTrunc(b.CreateLShr(special(b, Special::LaneId), 5), b.getInt32Ty()), 5);
    return b.CreateIntrinsic(llvm::Intrinsic::spv_wave_readlane, {v->getType()},
                             {v, b.CreateOr(src, half)});
  }

  // Vulkan promises no independent forward progress between invocations of a subgroup.
  bool lockstep_lanes() const override { return true; }

  // No slot cache in shaders: on NVIDIA's Vulkan driver (H200, 580.159) a cached `[kernel]` key
  // hung the dispatch when the update ran in the last thread (tools/kerneltime.bt) or two maps
  // cached theirs (searching, the same scripts finished with exact counts); lavapipe ran both.
  bool slot_cache() const override { return false; }

  // Vulkan needs structured control flow, and LLVM 22's SPIR-V back end structurizes some CFGs
  // wrongly on its own (spirv-val: a branch "exits the selection ... but not via a structured
  // exit"; seen with last_thread, which tools/kerneltime.bt uses, and with if/else around map
  // updates): LLVM's StructurizeCFG (AMDGPU's) gives it one where every branch has its merge.
  // StructurizeCFG handles conditional branches only (AMDGPU lowers switches before it): O2
  // turns the slot search's state test into a switch, which it would structurize into "never
  // found" (a keyed map read in a probe returned the slot's state word).
  void optimize(llvm::Module &m) const override {
    codegen::optimize_o2(m, tm_.get(),
                         flavour_ == SpirvFlavour::Vulkan ? "function(lower-switch,structurizecfg)" : nullptr);
  }

  Result<abi::DeviceCode> emit(llvm::Module &m) const override {
    bool vulkan = flavour_ == SpirvFlavour::Vulkan;
    std::string why;
    if (vulkan && !atomics_to_placeholders(m, why))
      return make_error("gpu probes in Vulkan shaders: " + why);
    if (vulkan) {
      drop_inbounds(m);
      cttz_to_bit_count(m);
      for (auto &f : m)
        if (!f.isDeclaration()) {
          loop_exit_values_through_locals(f);
          hoist_out_of_preheaders(f);
        }
    }
    auto buf = run_backend(m);
    if (!buf)
      return make_error(buf.error());
    std::vector<uint32_t> words(buf->size() / 4);
    std::memcpy(words.data(), buf->data(), words.size() * 4);
    abi::DeviceCode code{vulkan ? abi::DeviceFormat::SpirvVulkan : abi::DeviceFormat::SpirvOpenCL,
                         {}, 0};
    if (vulkan) {
      auto done = to_vulkan_flavour(words);
      if (!done)
        return make_error(done.error());
      words = std::move(*done);
    }
    code.bytes.assign(reinterpret_cast<const char *>(words.data()), words.size() * 4);
    return code;
  }

private:
  // LLVM's SPIR-V back end aborts ("Unable to meet SPIR-V requirements") or crashes on some
  // input rather than reporting an error, and keeps state between modules: it runs in a child
  // process, whose failure is a message for the user.
  Result<std::string> run_backend(llvm::Module &m) const {
    int fds[2];
    if (pipe(fds) != 0)
      return make_error("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
      return make_error("fork failed");
    if (pid == 0) {
      close(fds[0]);
      int null = open("/dev/null", O_WRONLY); // its crash report is not the user's business
      if (null >= 0)
        dup2(null, 2);
      llvm::SmallString<0> buf;
      llvm::raw_svector_ostream os(buf);
      llvm::legacy::PassManager pm;
      if (tm_->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
        _exit(2);
      pm.run(m);
      for (size_t off = 0; off < buf.size();) {
        ssize_t n = write(fds[1], buf.data() + off, buf.size() - off);
        if (n <= 0)
          _exit(3);
        off += size_t(n);
      }
      _exit(0);
    }
    close(fds[1]);
    std::string out;
    char chunk[65536];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0)
        out.append(chunk, size_t(n));
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return make_error("LLVM's SPIR-V back end failed on these probes (" +
                        std::string(WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                        : "status " + std::to_string(WEXITSTATUS(status))) +
                        ")");
    return out;
  }

  // The i32 mask of this lane's half whose lanes hold PRED.
  llvm::Value *ballot(llvm::IRBuilder<> &b, llvm::Value *pred) const {
    auto *words = b.CreateIntrinsic(llvm::Intrinsic::spv_wave_ballot, {}, {pred});
    auto *half = b.CreateTrunc(b.CreateLShr(special(b, Special::LaneId), 5), b.getInt32Ty());
    return b.CreateExtractElement(words, half);
  }
  llvm::Value *lowest(llvm::IRBuilder<> &b, llvm::Value *mask) const {
    return b.CreateIntrinsic(llvm::Intrinsic::cttz, {b.getInt32Ty()}, {mask, b.getTrue()});
  }
  // Whether this lane's i64 V equals lane SRC's (compared in 32-bit halves: shuffles of 64-bit
  // values need more of a device than the probes ask for).
  llvm::Value *same_as_lane(llvm::IRBuilder<> &b, llvm::Value *v, llvm::Value *src) const {
    auto *lo = b.CreateTrunc(v, b.getInt32Ty());
    auto *hi = b.CreateTrunc(b.CreateLShr(v, 32), b.getInt32Ty());
    return b.CreateAnd(b.CreateICmpEQ(lo, shuffle(b, nullptr, lo, src)),
                       b.CreateICmpEQ(hi, shuffle(b, nullptr, hi, src)));
  }
  // OpReadClockKHR of S's scope, through the placeholder to_vulkan_flavour rewrites.
  llvm::Value *read_clock(llvm::IRBuilder<> &b, Special s) const {
    if (flavour_ != SpirvFlavour::Vulkan) // refused by unavailable()
      return b.getInt64(0);
    uint32_t scope = s == Special::Clock ? spirv::ScopeSubgroup : spirv::ScopeDevice;
    auto *m = b.GetInsertBlock()->getModule();
    auto callee = m->getOrInsertFunction(kClockPlaceholder + std::to_string(scope), b.getInt64Ty());
    return b.CreateCall(callee);
  }


  SpirvFlavour flavour_;
  llvm::Triple triple_;
  std::unique_ptr<llvm::TargetMachine> tm_;
};

} // namespace

std::unique_ptr<codegen::DeviceTarget> make_spirv_target(SpirvFlavour flavour) {
  llvm::Triple triple(flavour == SpirvFlavour::Vulkan ? "spirv64-unknown-vulkan1.3-compute"
                                                      : "spirv64-unknown-unknown");
  std::string error;
  const llvm::Target *target = spirv_backend(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "", "", opts, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Default));
  if (!tm)
    return nullptr;
  return std::make_unique<SpirvTarget>(flavour, std::move(triple), std::move(tm));
}

} // namespace gpubt::targets
