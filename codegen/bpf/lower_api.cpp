// GPU API probes in BPF (see lower_api.h). Argument words are read per the catalog's SysV
// locations; uretprobes cannot see arguments (the registers are clobbered by then), so a hidden
// entry program saves them in an LRU hash keyed by (function, thread) for the return program.
#include "codegen/bpf/lower_api.h"

#include <linux/bpf.h>

#include <functional>
#include <set>

#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_expr.h"
#include "codegen/bpf/probe_maps.h"
#include "frontend/ast_walk.h"
#include "runtime/abi/agent_protocol.h"
#include "stdlib/api_types.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

constexpr uint32_t kRegSp = stdlib::pt_regs_sp_offset, kRegAx = stdlib::pt_regs_ax_offset;
constexpr uint32_t kStackWords = kSavedArgWords - 6;
constexpr uint32_t kPendingEntries = 10240;

// Pending-key tags of the kname learning probes (the high half of the key; the low half is tid).
enum KnameTag : uint32_t {
  TagGetKernel = 1,
  TagModuleGetFunction = 2,
  TagLibraryGetKernel = 3,
  TagKernelGetFunction = 4, // a CUkernel's CUfunction: what cuBLAS passes to cuLaunchKernel
};

// Whether any expression of PROBE satisfies PRED.
template <class P> bool probe_uses(const Probe &probe, P &&pred) {
  bool found = false;
  for_each_expr(probe, [&](const Expr &e) { found = found || pred(e); });
  return found;
}

bool is_args_field(const Expr &e) {
  return e.kind == ExprKind::Field && is_builtin(*e.as<FieldExpr>().base, BuiltinId::Args);
}

bool is_kname_call(const Expr &e) {
  return is_call(e, FunctionId::Kname);
}

bool program_uses_kname(const Program &program) {
  for (const auto &p : program.probes)
    if (probe_uses(*p, is_kname_call))
      return true;
  return false;
}

// The saved-args slot of a catalogued function: its index in the catalog.
uint32_t function_slot(const stdlib::ApiFunction *fn) {
  return static_cast<uint32_t>(fn - stdlib::api_functions().data());
}

// Hidden entry program: the argument words of this call, for the uretprobes' args.
void save_args(LowerCtx &c, uint32_t slot) {
  llvm::Value *words = scratch_slot(c, 8 * kSavedArgWords);
  zero_bytes(c, words, 8, 8 * kSavedArgWords);
  for (uint32_t i = 0; i < 6; ++i)
    c.b.CreateAlignedStore(ctx_word(c, stdlib::pt_regs_arg_offset(i)), byte_ptr(c, words, 8 * i),
                           llvm::Align(8));
  // Stack slot k is at rsp + 8 + 8k at entry (rsp points at the return address).
  auto *stack = c.b.CreateAdd(ctx_word(c, kRegSp), c.b.getInt64(8));
  read_user(c, byte_ptr(c, words, 48), 8 * kStackWords, stack);
  map_update(c, c.maps->saved_args, tid_key(c, slot), words);
}

// Entry of a kname learning probe: remembers the out-pointer (rdi) and the stub (rsi) or name
// pointer (rdx) until the call returns.
void pending_entry(LowerCtx &c, uint32_t tag) {
  llvm::Value *v = scratch_slot(c, 16);
  c.b.CreateAlignedStore(ctx_word(c, stdlib::pt_regs_arg_offset(0)), v, llvm::Align(8));
  uint32_t second = tag == TagGetKernel || tag == TagKernelGetFunction ? 1 : 2;
  c.b.CreateAlignedStore(ctx_word(c, stdlib::pt_regs_arg_offset(second)), byte_ptr(c, v, 8),
                         llvm::Align(8));
  map_update(c, c.maps->kname_pending, tid_key(c, tag), v);
}

// Return of a kname learning probe: the handle the call wrote to *out -> stub or name.
void pending_return(LowerCtx &c, uint32_t tag) {
  llvm::Value *key = tid_key(c, tag);
  llvm::Value *p = map_lookup(c, c.maps->kname_pending, key);
  if_nonnull(c, p, [&] {
    auto *out = c.b.CreateAlignedLoad(c.b.getInt64Ty(), p, llvm::Align(8));
    auto *second = c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, p, 8), llvm::Align(8));
    call_helper(c, BPF_FUNC_map_delete_elem, {map_ref(c, c.maps->kname_pending), key});
    llvm::Value *handle = stack_i64(c);
    read_user(c, handle, 8, out);
    auto *h = c.b.CreateLoad(c.b.getInt64Ty(), handle);
    // Without a driver __cudaGetKernel fails but still hands out the stub as the handle; the
    // driver calls write their out-parameter only on success.
    auto *ok = c.b.CreateICmpNE(h, c.b.getInt64(0));
    if (tag != TagGetKernel)
      ok =
          c.b.CreateAnd(ok, c.b.CreateICmpEQ(c.b.CreateTrunc(ctx_word(c, kRegAx), c.b.getInt32Ty()),
                                             c.b.getInt32(0)));
    auto *rec = llvm::BasicBlock::Create(c.ctx, "kn.rec", c.fn);
    auto *done = llvm::BasicBlock::Create(c.ctx, "kn.done", c.fn);
    c.b.CreateCondBr(ok, rec, done);
    c.b.SetInsertPoint(rec);
    if (tag == TagGetKernel) {
      llvm::Value *stub = stack_i64(c);
      c.b.CreateStore(second, stub);
      map_update(c, c.maps->kname_stubs, handle, stub);
    } else if (tag == TagKernelGetFunction) { // the function is named as its kernel is
      llvm::Value *kernel = stack_i64(c);
      c.b.CreateStore(second, kernel);
      for (int map : {c.maps->kname_stubs, c.maps->kname_names}) {
        llvm::Value *known = map_lookup(c, map, kernel);
        if_nonnull(c, known, [&] { map_update(c, map, handle, known); });
      }
    } else {
      llvm::Value *name = scratch_slot(c, abi::kKernelNameSize);
      zero_bytes(c, name, 8, abi::kKernelNameSize);
      call_helper(
          c, BPF_FUNC_probe_read_user_str,
          {name, c.b.getInt32(abi::kKernelNameSize), c.b.CreateIntToPtr(second, c.b.getPtrTy())});
      map_update(c, c.maps->kname_names, handle, name);
    }
    c.b.CreateBr(done);
    c.b.SetInsertPoint(done);
  });
}

bool needs_saved_args(const Probe &p, const AttachPoint &ap) {
  return ap.provider == Provider::Uretprobe && stdlib::api_function_for(ap) &&
         probe_uses(p, is_args_field);
}

} // namespace

void add_api_maps(const Program &program, layout::MapLayout &layout,
                  abi::ProgramSpec &spec) {
  bool saved = false;
  for (const auto &p : program.probes)
    for (const auto &ap : p->attach_points)
      saved = saved || needs_saved_args(*p, ap);
  if (saved)
    layout.saved_args = push_internal_map(spec, "api_saved_args", BPF_MAP_TYPE_LRU_HASH, 8,
                                           8 * kSavedArgWords, kPendingEntries);
  if (program_uses_kname(program)) {
    layout.kname_pending =
        push_internal_map(spec, "kname_pending", BPF_MAP_TYPE_LRU_HASH, 8, 16, kPendingEntries);
    layout.kname_stubs =
        push_internal_map(spec, "kname_stubs", BPF_MAP_TYPE_HASH, 8, 8, kPendingEntries);
    layout.kname_names = push_internal_map(spec, "kname_names", BPF_MAP_TYPE_HASH, 8,
                                           abi::kKernelNameSize, kPendingEntries);
    spec.kernel_names_map = layout.kname_names;
  }
}

std::vector<std::string> api_attach_symbols(const AttachPoint &ap) {
  const stdlib::ApiFunction *fn = stdlib::api_function_for(ap);
  if (!fn || fn->name != ap.func || fn->symbols.empty())
    return {ap.func};
  return {fn->symbols.begin(), fn->symbols.end()};
}

void load_saved_args(LowerCtx &c) {
  if (c.ap->provider != Provider::Uretprobe || c.maps->saved_args < 0 ||
      !needs_saved_args(*c.probe, *c.ap))
    return;
  c.saved_args = scratch_slot(c, 8 * kSavedArgWords);
  zero_bytes(c, c.saved_args, 8, 8 * kSavedArgWords);
  llvm::Value *p =
      map_lookup(c, c.maps->saved_args, tid_key(c, function_slot(stdlib::api_function_for(*c.ap))));
  if_nonnull(c, p, [&] { copy_bytes(c, c.saved_args, 8, p, 8, 8 * kSavedArgWords); });
}

// Eightbyte K of an argument at LOC: a register or a stack slot, at entry or from saved words.
static llvm::Value *arg_word(LowerCtx &c, const stdlib::ArgLocation &loc, uint32_t k) {
  uint32_t i = loc.index + k;
  if (c.saved_args) {
    uint32_t w = loc.on_stack ? 6 + i : i;
    if (w >= kSavedArgWords)
      return c.b.getInt64(0);
    return c.b.CreateAlignedLoad(c.b.getInt64Ty(), byte_ptr(c, c.saved_args, 8 * w),
                                 llvm::Align(8));
  }
  if (!loc.on_stack)
    return ctx_word(c, stdlib::pt_regs_arg_offset(i));
  llvm::Value *slot = stack_i64(c);
  read_user(c, slot, 8, c.b.CreateAdd(ctx_word(c, kRegSp), c.b.getInt64(8 + 8 * i)));
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), slot, llvm::Align(8));
}

Val lower_api_arg(LowerCtx &c, const FieldExpr &e) {
  const stdlib::ApiFunction *fn = stdlib::api_function_for(*c.ap);
  const stdlib::ApiParam *p = fn ? stdlib::find_api_param(*fn, e.field) : nullptr;
  if (!p) {
    // A function the binary's debug info describes (driver/program_types.h).
    auto i = !fn && c.ap->provider == Provider::Uprobe && c.opts->uprobe_arg_index
                 ? c.opts->uprobe_arg_index(*c.ap, e.field)
                 : std::nullopt;
    if (i)
      return {normalize(c, ctx_word(c, stdlib::pt_regs_arg_offset(*i)), e.type)};
    set_error(c, "codegen: no argument " + e.field + " in " + c.ap->name());
    return {c.b.getInt64(0)};
  }
  if (c.ap->provider == Provider::Uretprobe && !c.saved_args) {
    set_error(c, "BUG: " + c.ap->name() + " reads args without saved arguments");
    return {c.b.getInt64(0)};
  }
  return lower_api_param(c, *p, e.type);
}

Val lower_api_param(LowerCtx &c, const stdlib::ApiParam &p, const Type &type) {
  if (p.kind == stdlib::ApiValueKind::Dim3) {
    // x in the low and y in the high half of the first eightbyte, z in the low half of the next.
    llvm::Value *buf = scratch_slot(c, 12);
    auto *w0 = arg_word(c, p.loc, 0), *w1 = arg_word(c, p.loc, 1);
    auto *i32 = c.b.getInt32Ty();
    c.b.CreateAlignedStore(c.b.CreateTrunc(w0, i32), buf, llvm::Align(4));
    c.b.CreateAlignedStore(c.b.CreateTrunc(c.b.CreateLShr(w0, 32), i32), byte_ptr(c, buf, 4),
                           llvm::Align(4));
    c.b.CreateAlignedStore(c.b.CreateTrunc(w1, i32), byte_ptr(c, buf, 8), llvm::Align(4));
    return {buf, 8};
  }
  // Bytes above a value's size are unspecified (e.g. the high half of an int's register).
  return {normalize(c, arg_word(c, p.loc, 0), type)};
}

Val lower_kname(LowerCtx &c, llvm::Value *handle) {
  if (c.maps->kname_stubs < 0)
    return {handle};
  llvm::Value *key = stack_i64(c);
  c.b.CreateStore(handle, key);
  llvm::Value *result = stack_i64(c);
  c.b.CreateStore(handle, result);
  llvm::Value *stub = map_lookup(c, c.maps->kname_stubs, key);
  if_nonnull(c, stub, [&] {
    c.b.CreateStore(c.b.CreateAlignedLoad(c.b.getInt64Ty(), stub, llvm::Align(8)), result);
  });
  return {c.b.CreateLoad(c.b.getInt64Ty(), result)};
}

bool is_gpu_api_probe(const AttachPoint &ap) {
  if (ap.provider != Provider::Uprobe && ap.provider != Provider::Uretprobe)
    return false;
  if (stdlib::library_of_alias(ap.target))
    return true;
  std::string file = ap.target.substr(ap.target.rfind('/') + 1);
  for (const char *lib : {"libcuda.so", "libcudart.so", "libamdhip64.so", "libnccl.so", "librccl.so"})
    if (file.rfind(lib, 0) == 0)
      return true;
  return false;
}

void return_on_agent_thread(LowerCtx &c) {
  llvm::BasicBlock &entry = c.fn->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  auto *comm = at_entry.CreateAlloca(llvm::ArrayType::get(c.b.getInt8Ty(), 16));
  comm->setAlignment(llvm::Align(8));
  call_helper(c, BPF_FUNC_get_current_comm, {comm, c.b.getInt32(16)});
  uint64_t prefix = 0, mask = 0;
  for (size_t i = 0; i < sizeof abi::kAgentThreadPrefix - 1; ++i) {
    prefix |= uint64_t(uint8_t(abi::kAgentThreadPrefix[i])) << (8 * i);
    mask |= uint64_t(0xff) << (8 * i);
  }
  auto *word = c.b.CreateAlignedLoad(c.b.getInt64Ty(), comm, llvm::Align(8));
  auto *ours = c.b.CreateICmpEQ(c.b.CreateAnd(word, c.b.getInt64(mask)), c.b.getInt64(prefix));
  auto *skip = llvm::BasicBlock::Create(c.ctx, "agent.thread", c.fn);
  auto *go = llvm::BasicBlock::Create(c.ctx, "program.thread", c.fn);
  c.b.CreateCondBr(ours, skip, go);
  c.b.SetInsertPoint(skip);
  c.b.CreateRet(c.b.getInt64(0));
  c.b.SetInsertPoint(go);
}

std::vector<HiddenProbe> hidden_api_probes(const Program &program,
                                           const layout::MapLayout &layout) {
  std::vector<HiddenProbe> out;
  auto add = [&](abi::AttachKind kind, const std::string &target, const std::string &func,
                 void (*lower)(LowerCtx &, uint32_t), uint32_t slot) {
    HiddenProbe h;
    h.spec.kind = kind;
    h.spec.target = target;
    h.spec.func = func;
    h.spec.name = std::string(kind == abi::AttachKind::Uprobe ? "uprobe:" : "uretprobe:") + target +
                  ":" + func;
    h.spec.hidden = true;
    h.lower = lower;
    h.slot = slot;
    out.push_back(std::move(h));
  };
  std::set<std::pair<std::string, std::string>> saved;
  if (layout.saved_args >= 0)
    for (const auto &p : program.probes)
      for (const auto &ap : p->attach_points)
        if (needs_saved_args(*p, ap))
          for (const std::string &sym : api_attach_symbols(ap))
            if (saved.insert({ap.target, sym}).second)
              add(abi::AttachKind::Uprobe, ap.target, sym, save_args,
                  function_slot(stdlib::api_function_for(ap)));
  if (layout.kname_stubs >= 0) {
    const std::pair<const char *, const char *> learners[] = {{"cudart", "__cudaGetKernel"},
                                                              {"cuda", "cuModuleGetFunction"},
                                                              {"cuda", "cuLibraryGetKernel"},
                                                              {"cuda", "cuKernelGetFunction"}};
    uint32_t tag = TagGetKernel;
    for (const auto &[target, func] : learners) {
      add(abi::AttachKind::Uprobe, target, func, pending_entry, tag);
      add(abi::AttachKind::Uretprobe, target, func, pending_return, tag);
      ++tag;
    }
  }
  return out;
}

} // namespace gpubt::codegen::bpf
