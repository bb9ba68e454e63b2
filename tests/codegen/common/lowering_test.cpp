// The lowering core against a back end of the test's own: statements, control flow and
// operators come out as valid IR, and reach the back end only through its hooks.
#include <gtest/gtest.h>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/common/lowering.h"
#include "tests/support/checked_script.h"

namespace gpubt::codegen {
namespace {

using frontend::Type;
using frontend::TypeKind;

// Values in allocas, each map one i64 global; every hook call is logged.
struct TestLowering : Lowering {
  using Lowering::Lowering;
  std::vector<std::string> log;

  llvm::Value *entry_alloca(uint32_t size) {
    llvm::IRBuilder<> eb(&fn->getEntryBlock(), fn->getEntryBlock().begin());
    return eb.CreateAlloca(llvm::ArrayType::get(eb.getInt8Ty(), std::max(size, 8u)));
  }
  llvm::Value *map_global(const std::string &name) {
    auto *g = mod.getOrInsertGlobal(name, b.getInt64Ty());
    llvm::cast<llvm::GlobalVariable>(g)->setInitializer(b.getInt64(0));
    return g;
  }

  bool holds_in_memory(const Type &t) const override {
    return t.kind == TypeKind::String || t.kind == TypeKind::Tuple;
  }
  llvm::Value *temp_buffer(uint32_t size, bool zeroed) override {
    log.push_back(zeroed ? "zeroed buffer" : "buffer");
    llvm::Value *p = entry_alloca(size);
    if (zeroed)
      b.CreateMemSet(p, b.getInt8(0), size, llvm::Align(1));
    return p;
  }
  llvm::Value *variable_slot(const Type &t) override {
    return entry_alloca(holds_in_memory(t) ? t.size : 8);
  }
  Value load(llvm::Value *ptr, uint32_t align, const Type &t) override {
    if (holds_in_memory(t))
      return {ptr, align};
    return {b.CreateLoad(b.getInt64Ty(), ptr)};
  }
  void store(llvm::Value *dst, uint32_t, const Type &dst_t, Value src, const Type &) override {
    if (holds_in_memory(dst_t))
      b.CreateMemCpy(dst, llvm::Align(1), src.v, llvm::Align(1), dst_t.size);
    else
      b.CreateStore(src.v, dst);
  }
  Value string_value(const frontend::StringExpr &e) override {
    return {temp_buffer(e.type.size, true)};
  }
  Value map_read(const frontend::MapExpr &m) override {
    log.push_back("read " + m.name);
    return {b.CreateLoad(b.getInt64Ty(), map_global(m.name))};
  }
  void map_write(const frontend::MapExpr &m, Value v, const Type &) override {
    log.push_back("write " + m.name);
    b.CreateStore(v.v, map_global(m.name));
  }
  bool map_aggregate(const frontend::MapExpr &m, const frontend::CallExpr &call) override {
    if (call.name != "count")
      return false;
    log.push_back("count " + m.name);
    return true;
  }
  Value builtin_value(const frontend::BuiltinExpr &e) override {
    log.push_back("builtin " + e.name);
    return {b.getInt64(42)};
  }
  Value call_value(const frontend::CallExpr &e) override {
    log.push_back("call " + e.name);
    return {b.getInt64(0)};
  }
  Value deref_value(const frontend::UnaryExpr &) override { return refuse("*"); }
  Value address_of(const frontend::UnaryExpr &) override { return refuse("&"); }
  Value index_value(const frontend::IndexExpr &) override { return refuse("[]"); }
  Value field_value(const frontend::FieldExpr &) override { return refuse("."); }
  std::optional<Value> memory_compare(const frontend::BinaryExpr &, Value, Value) override {
    return std::nullopt;
  }
  std::string operator_error(const frontend::BinaryExpr &e) override {
    return "no " + to_string(e.lhs->type) + " operator";
  }
  Value refuse(const std::string &what) {
    set_error("no " + what);
    return {b.getInt64(0)};
  }
};

struct Lowered {
  std::string error; // the script's diagnostics, or the lowering's
  std::vector<std::string> log;
  std::string ir;
};

// The first probe of SCRIPT as the body of `void probe()`.
Lowered lower(const std::string &script) {
  Lowered out;
  auto checked = gpubt::testing::check_script(script, {});
  if (!checked.error.empty()) {
    out.error = checked.error;
    return out;
  }
  llvm::LLVMContext ctx;
  llvm::Module mod("test", ctx);
  TestLowering l(mod);
  l.fn = llvm::Function::Create(llvm::FunctionType::get(l.b.getVoidTy(), false),
                                llvm::Function::ExternalLinkage, "probe", mod);
  l.sema = &checked.sema;
  l.probe = checked.prog->probes[0].get();
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", l.fn);
  auto *out_bb = llvm::BasicBlock::Create(ctx, "out", l.fn);
  l.b.SetInsertPoint(out_bb);
  l.b.CreateRetVoid();
  l.b.SetInsertPoint(entry);
  l.lower_probe_body(out_bb);
  l.b.CreateBr(out_bb);
  out.error = l.error;
  out.log = l.log;
  llvm::raw_string_ostream irs(out.ir);
  if (llvm::verifyModule(mod, &irs))
    out.error += "invalid IR";
  mod.print(irs, nullptr);
  return out;
}

using Log = std::vector<std::string>;

TEST(Lowering, AssignmentsAndCompoundAssignments) {
  auto l = lower("BEGIN { $x = 1; $x += 2; @m = $x * 3; @m -= 1; }");
  ASSERT_EQ(l.error, "") << l.ir;
  EXPECT_EQ(l.log, (Log{"write @m", "read @m", "write @m"}));
  EXPECT_NE(l.ir.find("mul i64"), std::string::npos) << l.ir;
}

TEST(Lowering, PredicateIfElseAndWhile) {
  auto l = lower("BEGIN / pid / { $i = 0; while ($i < 3) { $i++; } "
                 "if ($i == 3) { @a = 1; } else { @b = 2; } }");
  ASSERT_EQ(l.error, "") << l.ir;
  EXPECT_EQ(l.log, (Log{"builtin pid", "write @a", "write @b"}));
  for (const char *block : {"pred.pass", "while.cond", "while.body", "while.done"})
    EXPECT_NE(l.ir.find(std::string(block) + ":"), std::string::npos) << block << "\n" << l.ir;
}

// The right side is read in a block of its own, which the left side's value branches around.
TEST(Lowering, ShortCircuitReadsTheRightSideOnlyWhenNeeded) {
  auto l = lower("BEGIN { @y = 1; @x = pid && @y; }");
  ASSERT_EQ(l.error, "") << l.ir;
  EXPECT_EQ(l.log, (Log{"write @y", "builtin pid", "read @y", "write @x"}));
  size_t rhs = l.ir.find("and.rhs:");
  ASSERT_NE(rhs, std::string::npos) << l.ir;
  EXPECT_NE(l.ir.find("load i64, ptr @\"@y\"", rhs), std::string::npos) << l.ir;
  EXPECT_NE(l.ir.find("phi i1"), std::string::npos) << l.ir;
}

TEST(Lowering, AggregationsGoToTheBackEnd) {
  auto l = lower("BEGIN { @c = count(); @c2[1] = count(); exit(); }");
  ASSERT_EQ(l.error, "") << l.ir;
  EXPECT_EQ(l.log, (Log{"count @c", "count @c2", "call exit"}));
}

TEST(Lowering, TuplesTernariesAndTheirFields) {
  auto l = lower(R"(BEGIN { $t = (1, "ab"); @x = $t.0; $s = pid ? "a" : "b"; })");
  ASSERT_EQ(l.error, "") << l.ir;
  EXPECT_EQ(l.log, (Log{"zeroed buffer", "zeroed buffer", "write @x", "builtin pid", "buffer",
                        "zeroed buffer", "zeroed buffer"}));
}

TEST(Lowering, OperatorsOnMemoryValuesAreTheBackEndsToRefuse) {
  auto l = lower(R"(BEGIN { @x = "a" == "b"; })");
  EXPECT_EQ(l.error.substr(0, 10), "no string[");
}

} // namespace
} // namespace gpubt::codegen
