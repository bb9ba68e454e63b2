// LLVM's O2 pipeline (see optimize_module.h).
#include "codegen/optimize_module.h"

#include <llvm/Passes/PassBuilder.h>

namespace gpubt::codegen {

void optimize_o2(llvm::Module &m, llvm::TargetMachine *tm, const char *then) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
  if (!then)
    return;
  llvm::ModulePassManager after;
  if (auto err = pb.parsePassPipeline(after, then))
    llvm::report_fatal_error(std::move(err)); // a pipeline of ours: a BUG, not the user's
  after.run(m, mam);
}

} // namespace gpubt::codegen
