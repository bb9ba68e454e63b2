// BPF object emission through LLVM's TargetMachine and instruction extraction from the ELF.
#include "codegen/bpf/emit_object.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

namespace gpubt::codegen::bpf {

namespace {

const char *kTriple = "bpfel";
const char *kCpu = "v3";

Result<llvm::TargetMachine *> target_machine() {
  static std::once_flag once;
  static std::unique_ptr<llvm::TargetMachine> tm;
  static std::string error;
  std::call_once(once, [] {
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();
    llvm::Triple triple(kTriple);
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return;
    llvm::TargetOptions opts;
    tm.reset(target->createTargetMachine(triple, kCpu, "", opts, std::nullopt, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive));
    if (!tm)
      error = "cannot create the BPF target machine";
  });
  if (!tm)
    return make_error("BUG: LLVM BPF target unavailable: " + error);
  return tm.get();
}

} // namespace

Status prepare_bpf_module(llvm::Module &m) {
  auto tm = target_machine();
  if (!tm)
    return make_error(tm.error());
  m.setTargetTriple(llvm::Triple(kTriple));
  m.setDataLayout((*tm)->createDataLayout());
  return Ok{};
}

Status optimize_bpf_module(llvm::Module &m) {
  auto tm = target_machine();
  if (!tm)
    return make_error(tm.error());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(*tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
  return Ok{};
}

namespace {

// LLVMContext's own handler prints an error diagnostic and calls exit(1); this one keeps them.
void keep_backend_error(const llvm::DiagnosticInfo *diag, void *context) {
  const llvm::DiagnosticInfo &info = *diag;
  if (info.getSeverity() != llvm::DS_Error)
    return;
  BackendError e;
  if (auto *u = llvm::dyn_cast<llvm::DiagnosticInfoUnsupported>(&info)) {
    e.function = &u->getFunction();
    e.message = u->getMessage().str();
  } else {
    if (auto *r = llvm::dyn_cast<llvm::DiagnosticInfoResourceLimit>(&info))
      e.function = &r->getFunction();
    llvm::raw_string_ostream os(e.message);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
  }
  auto &errors = *static_cast<std::vector<BackendError> *>(context);
  for (const auto &seen : errors) // the stack limit is reported once per slot past it
    if (seen.function == e.function && seen.message == e.message)
      return;
  errors.push_back(std::move(e));
}

} // namespace

Result<std::vector<uint8_t>> emit_bpf_object(llvm::Module &m, std::vector<BackendError> &errors) {
  auto tm = target_machine();
  if (!tm)
    return make_error(tm.error());
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return make_error("BUG: the BPF target cannot emit objects");
  llvm::LLVMContext &ctx = m.getContext();
  ctx.setDiagnosticHandlerCallBack(keep_backend_error, &errors);
  pm.run(m);
  ctx.setDiagnosticHandlerCallBack(nullptr, nullptr);
  if (!errors.empty())
    return make_error(
        "LLVM's BPF back end: " +
        (errors[0].function ? "in " + errors[0].function->getName().str() + ": " : "") +
        errors[0].message);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

namespace {

// A ld_imm64 of a function's address (a for-over-a-map callback) in the same section: at byte
// OFFSET, the function at byte TARGET (the symbol's value; the addend is in the instruction).
struct FuncRef {
  uint64_t offset, target;
};

std::optional<FuncRef> callback_ref(const llvm::object::RelocationRef &r,
                                    const llvm::object::SectionRef &in) {
  auto sym = r.getSymbol();
  auto sec = sym->getSection();
  auto value = sym->getValue();
  if (!sec || !value || *sec != in)
    return std::nullopt;
  return FuncRef{r.getOffset(), *value};
}

// The kernel's form: src_reg = BPF_PSEUDO_FUNC, imm = the target's instruction index relative
// to the next instruction.
bool link_callback(std::vector<uint64_t> &insns, const FuncRef &f) {
  uint64_t at = f.offset / 8;
  if (at + 1 >= insns.size() || (insns[at] & 0xff) != 0x18) // BPF_LD | BPF_IMM | BPF_DW
    return false;
  uint64_t insn = insns[at];
  int32_t addend = static_cast<int32_t>(insn >> 32);
  int64_t target = (static_cast<int64_t>(f.target) + addend) / 8;
  if (target <= 0 || static_cast<uint64_t>(target) >= insns.size())
    return false;
  int32_t imm = static_cast<int32_t>(target - static_cast<int64_t>(at) - 1);
  uint64_t regs = (insn >> 8) & 0x0f; // dst_reg; src_reg = BPF_PSEUDO_FUNC (4)
  insns[at] = (uint64_t(uint32_t(imm)) << 32) | (insn & 0xffff0000u) | ((regs | (4u << 4)) << 8) |
              0x18;
  return true;
}

} // namespace

Result<std::map<std::string, std::vector<uint64_t>>>
extract_sections(const std::vector<uint8_t> &object, const std::string &prefix) {
  llvm::StringRef data(reinterpret_cast<const char *>(object.data()), object.size());
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(data, "bpf.o"));
  if (!obj)
    return make_error("BUG: cannot read the BPF object: " + llvm::toString(obj.takeError()));
  std::map<std::string, std::vector<uint64_t>> out;
  std::map<std::string, std::vector<FuncRef>> funcs;
  for (const auto &sec : (*obj)->sections()) {
    auto name = sec.getName();
    if (!name)
      return make_error("BUG: " + llvm::toString(name.takeError()));
    auto relocated = sec.getRelocatedSection();
    if (relocated && *relocated != (*obj)->section_end()) {
      auto target = (*relocated)->getName();
      if (target && target->starts_with(prefix))
        for (const auto &r : sec.relocations())
          if (auto f = callback_ref(r, **relocated); f)
            funcs[target->str()].push_back(*f);
          else
            return make_error("BUG: BPF section " + target->str() + " has relocations (" +
                              name->str() + ")");
    }
    if ((sec.isData() || sec.isBSS()) && sec.getSize() > 0 && !name->starts_with(prefix))
      return make_error("BUG: the BPF object has a data section " + name->str());
    if (!name->starts_with(prefix))
      continue;
    auto contents = sec.getContents();
    if (!contents)
      return make_error("BUG: " + llvm::toString(contents.takeError()));
    std::vector<uint64_t> insns(contents->size() / 8);
    std::memcpy(insns.data(), contents->data(), insns.size() * 8);
    out[name->str()] = std::move(insns);
  }
  for (const auto &[sec, refs] : funcs)
    for (const FuncRef &f : refs)
      if (!link_callback(out[sec], f))
        return make_error("BUG: BPF section " + sec + " refers to a function outside it");
  return out;
}

} // namespace gpubt::codegen::bpf
