// bank_conflicts' lowering run, not just read: access_bank_conflicts builds its IR against a
// DeviceTarget whose warp collectives (match.any, ballot, the active mask, the lane) are calls
// into this test; LLVM's JIT compiles it for the host and one thread per active lane runs it,
// the collectives meeting at a barrier. Each request's value must be Nsight Compute's count,
// computed here from the addresses (distinct words per bank, per phase for wide accesses).
#include <gtest/gtest.h>

#include <array>
#include <barrier>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/device/device_context.h"

namespace gpubt::codegen::device {
namespace {

// One warp's request as the lanes see it.
struct Request {
  uint32_t size = 4;
  std::map<uint32_t, uint64_t> addr; // active lane -> address (window offset)
  std::set<uint32_t> not_shared;     // active lanes whose access is in global memory
};

// What the GPU does: per phase of 128 / size lanes, the most distinct units (size bytes, 4 at
// least) any bank group of the phase gets, less one, summed.
uint64_t nsight_count(const Request &r) {
  uint32_t shift = r.size >= 16 ? 4 : r.size >= 8 ? 3 : 2, per_phase = 1u << (7 - shift);
  std::map<uint32_t, std::map<uint64_t, std::set<uint64_t>>> units; // phase -> group -> units
  for (auto [lane, a] : r.addr)
    if (!r.not_shared.count(lane))
      units[lane / per_phase][(a >> shift) % per_phase].insert(a >> shift);
  uint64_t extra = 0;
  for (const auto &[phase, groups] : units) {
    size_t most = 0;
    for (const auto &[g, u] : groups)
      most = std::max(most, u.size());
    extra += most - 1;
  }
  return extra;
}

// The warp the JIT-compiled code runs in: each collective stores this lane's operand, waits for
// every active lane, computes, and waits again before the slots are reused.
struct Warp {
  uint32_t mask = 0;
  std::unique_ptr<std::barrier<>> meet;
  uint64_t slot[32] = {};
};
Warp *g_warp = nullptr;
thread_local uint32_t t_lane = 0;

uint32_t exchange_mask(uint64_t v, bool (*same)(uint64_t mine, uint64_t other), uint64_t mine) {
  g_warp->slot[t_lane] = v;
  g_warp->meet->arrive_and_wait();
  uint32_t out = 0;
  for (uint32_t l = 0; l < 32; ++l)
    if ((g_warp->mask >> l & 1) && same(mine, g_warp->slot[l]))
      out |= 1u << l;
  g_warp->meet->arrive_and_wait();
  return out;
}
extern "C" uint32_t sim_match_any(uint32_t, uint64_t v) {
  return exchange_mask(
      v, [](uint64_t a, uint64_t b) { return a == b; }, v);
}
extern "C" uint32_t sim_ballot(uint32_t, uint32_t pred) {
  return exchange_mask(
      pred, [](uint64_t, uint64_t b) { return b != 0; }, 0);
}
extern "C" uint64_t sim_active_mask() { return g_warp->mask; }
extern "C" uint64_t sim_lane() { return t_lane; }

// A target whose collectives are the functions above; nothing else of it is used.
class SimTarget : public DeviceTarget {
public:
  std::string name() const override { return "sim"; }
  void prepare_module(llvm::Module &) const override {}
  llvm::FunctionType *probe_type(llvm::LLVMContext &ctx) const override {
    return llvm::FunctionType::get(llvm::Type::getInt64Ty(ctx),
                                   {llvm::PointerType::get(ctx, 0), llvm::Type::getInt64Ty(ctx)},
                                   false);
  }
  llvm::Value *probe_context(llvm::IRBuilder<> &, llvm::Value *a) const override { return a; }
  unsigned global_address_space() const override { return 0; }
  bool supports(abi::ProbePointKind) const override { return true; }
  llvm::Value *thread_index(llvm::IRBuilder<> &b, Dim) const override { return b.getInt64(0); }
  llvm::Value *block_index(llvm::IRBuilder<> &b, Dim) const override { return b.getInt64(0); }
  llvm::Value *block_dim(llvm::IRBuilder<> &b, Dim) const override { return b.getInt64(1); }
  llvm::Value *grid_dim(llvm::IRBuilder<> &b, Dim) const override { return b.getInt64(1); }
  llvm::Value *special(llvm::IRBuilder<> &b, Special s) const override {
    return call(b, s == Special::ActiveMask ? "sim_active_mask" : "sim_lane", b.getInt64Ty(), {});
  }
  llvm::Value *match_any(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *v) const override {
    return call(b, "sim_match_any", b.getInt32Ty(), {mask, v});
  }
  llvm::Value *shuffle(llvm::IRBuilder<> &b, llvm::Value *, llvm::Value *v,
                       llvm::Value *) const override {
    return v;
  }
  llvm::Value *ballot(llvm::IRBuilder<> &b, llvm::Value *mask, llvm::Value *pred) const override {
    return call(b, "sim_ballot", b.getInt32Ty(), {mask, b.CreateZExt(pred, b.getInt32Ty())});
  }
  void optimize(llvm::Module &) const override {}
  Result<abi::DeviceCode> emit(llvm::Module &) const override { return abi::DeviceCode{}; }

private:
  static llvm::Value *call(llvm::IRBuilder<> &b, const char *fn, llvm::Type *ret,
                           std::vector<llvm::Value *> args) {
    std::vector<llvm::Type *> types;
    for (auto *a : args)
      types.push_back(a->getType());
    auto *m = b.GetInsertBlock()->getModule();
    return b.CreateCall(m->getOrInsertFunction(fn, llvm::FunctionType::get(ret, types, false)),
                        args);
  }
};

using BankFn = uint64_t (*)(void *, uint64_t, uint64_t, uint32_t, uint32_t, void *);

// bank_conflicts as a function of a memory probe's parameters, JIT-compiled for the host.
class BankConflictsRun : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto mod = std::make_unique<llvm::Module>("bank", *ctx);
    SimTarget target;
    DevCtx c(*mod, target);
    c.point = {abi::ProbePointKind::MemoryAccess, 0};
    auto &b = c.b;
    auto *fty = llvm::FunctionType::get(
        b.getInt64Ty(),
        {b.getPtrTy(), b.getInt64Ty(), b.getPtrTy(), b.getInt32Ty(), b.getInt32Ty(), b.getPtrTy()},
        false);
    c.fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "bank", *mod);
    b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", c.fn));
    b.CreateRet(access_bank_conflicts(c));
    ASSERT_EQ(c.error, "");
    auto jit = llvm::orc::LLJITBuilder().create();
    ASSERT_TRUE(!!jit);
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char *name, auto *fn) {
      symbols[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                                llvm::JITSymbolFlags::Exported};
    };
    add("sim_match_any", &sim_match_any);
    add("sim_ballot", &sim_ballot);
    add("sim_active_mask", &sim_active_mask);
    add("sim_lane", &sim_lane);
    ASSERT_FALSE(!!(*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols)));
    ASSERT_FALSE(
        !!(*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
    auto sym = (*jit)->lookup("bank");
    ASSERT_TRUE(!!sym);
    fn_ = sym->toPtr<BankFn>();
    jit_ = jit->release();
  }
  static void TearDownTestSuite() { delete jit_; }

  // Every active lane's value for R (they must agree).
  static std::set<uint64_t> run(const Request &r) {
    Warp w;
    for (auto [lane, a] : r.addr)
      w.mask |= 1u << lane;
    w.meet = std::make_unique<std::barrier<>>(r.addr.size());
    g_warp = &w;
    std::map<uint32_t, uint64_t> got; // filled first: each thread then writes only its own value
    for (auto [lane, a] : r.addr)
      got[lane] = ~0ull;
    std::vector<std::thread> lanes;
    for (auto [lane, a] : r.addr)
      lanes.emplace_back([&, lane = lane, a = a] {
        t_lane = lane;
        uint32_t flags =
            abi::FlagRead | (r.not_shared.count(lane) ? abi::FlagGlobal : abi::FlagShared);
        got.at(lane) = fn_(nullptr, 0, a, r.size, flags, nullptr);
      });
    for (auto &t : lanes)
      t.join();
    std::set<uint64_t> values;
    for (auto [lane, v] : got)
      values.insert(v);
    return values;
  }
  static void expect(const Request &r, uint64_t want) {
    ASSERT_NE(fn_, nullptr);
    EXPECT_EQ(nsight_count(r), want);
    EXPECT_EQ(run(r), std::set<uint64_t>{want});
  }

  static inline BankFn fn_ = nullptr;
  static inline llvm::orc::LLJIT *jit_ = nullptr;
};

Request full_warp(uint32_t size, const std::function<uint64_t(uint32_t)> &addr) {
  Request r;
  r.size = size;
  for (uint32_t l = 0; l < 32; ++l)
    r.addr[l] = addr(l);
  return r;
}

// mem_access.cu's kernels: a column of float[32][32], of float[32][33], one word.
TEST_F(BankConflictsRun, ColumnPaddedBroadcast) {
  expect(full_warp(4, [](uint32_t l) { return 128 * l + 8; }), 31);
  expect(full_warp(4, [](uint32_t l) { return 132 * l + 8; }), 0);
  expect(full_warp(4, [](uint32_t) { return 40; }), 0);
  expect(full_warp(4, [](uint32_t l) { return 4 * l; }), 0); // a row
  expect(full_warp(4, [](uint32_t l) { return 8 * l; }), 1); // stride 2: 2 per bank
  expect(full_warp(4, [](uint32_t l) { return 4 * (l / 2) + 256 * (l % 2); }), 1);
  expect(full_warp(1, [](uint32_t l) { return l; }), 0); // bytes of 8 words
}

// 8-byte accesses in two phases of 16 lanes, 16-byte in four of 8.
TEST_F(BankConflictsRun, WideAccessesCountByPhase) {
  expect(full_warp(8, [](uint32_t l) { return 8 * l; }), 0);
  expect(full_warp(8, [](uint32_t l) { return 16 * l; }), 2); // each phase 2 units per group
  expect(full_warp(16, [](uint32_t l) { return 16 * l; }), 0);
  expect(full_warp(16, [](uint32_t l) { return 128 * l; }), 28); // each phase: 8 in one group
}

// Inactive lanes take no part; lanes of a generic access outside shared memory count nothing.
TEST_F(BankConflictsRun, PartialWarpsAndOtherSpaces) {
  Request r = full_warp(4, [](uint32_t l) { return 128 * l; });
  for (uint32_t l = 0; l < 32; l += 2)
    r.addr.erase(l);
  expect(r, 15);
  for (uint32_t l = 1; l < 16; l += 2)
    r.not_shared.insert(l);
  expect(r, 7);
  Request none = full_warp(4, [](uint32_t l) { return 128 * l; });
  for (uint32_t l = 0; l < 32; ++l)
    none.not_shared.insert(l);
  expect(none, 0);
}

// Random requests against the arithmetic.
TEST_F(BankConflictsRun, RandomRequests) {
  std::mt19937 rng(28);
  for (int i = 0; i < 300; ++i) {
    Request r;
    r.size = std::array<uint32_t, 5>{1, 2, 4, 8, 16}[rng() % 5];
    uint64_t span = 1u << (6 + rng() % 8);
    for (uint32_t l = 0; l < 32; ++l) {
      if (rng() % 5 == 0)
        continue;
      r.addr[l] = (rng() % span) / r.size * r.size;
      if (rng() % 10 == 0)
        r.not_shared.insert(l);
    }
    if (r.addr.empty())
      continue;
    SCOPED_TRACE(i);
    ASSERT_NE(fn_, nullptr);
    EXPECT_EQ(run(r), std::set<uint64_t>{nsight_count(r)});
  }
}

} // namespace
} // namespace gpubt::codegen::device
