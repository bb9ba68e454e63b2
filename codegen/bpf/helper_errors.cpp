// Helper failures as events (see helper_errors.h).
#include "codegen/bpf/helper_errors.h"

#include "codegen/bpf/send_event.h"

namespace gpubt::codegen::bpf {
namespace {

bool enabled(const LowerCtx &c, HelperCheck level) {
  return c.opts && c.opts->helper_error_checks >= static_cast<int>(level);
}

void report_if(LowerCtx &c, const char *helper, llvm::Value *failed, llvm::Value *code) {
  uint32_t index = c.spec->helper_errors.size();
  c.spec->helper_errors.push_back({helper, c.span.line, c.span.col});
  auto *report = llvm::BasicBlock::Create(c.ctx, "helper.error", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "helper.ok", c.fn);
  c.b.CreateCondBr(failed, report, done);
  c.b.SetInsertPoint(report);
  send_event(c, abi::EventKind::HelperError, index, 8, [&](llvm::Value *payload) {
    c.b.CreateAlignedStore(code, payload, llvm::Align(8));
  });
  c.b.CreateBr(done);
  c.b.SetInsertPoint(done);
}

} // namespace

void check_helper_result(LowerCtx &c, HelperCheck level, const char *helper, llvm::Value *ret) {
  if (enabled(c, level))
    report_if(c, helper, c.b.CreateICmpSLT(ret, c.b.getInt64(0)), ret);
}

void check_lookup_result(LowerCtx &c, const char *helper, llvm::Value *ptr) {
  if (enabled(c, HelperCheck::Level2))
    report_if(c, helper, c.b.CreateIsNull(ptr), c.b.getInt64(0));
}

} // namespace gpubt::codegen::bpf
