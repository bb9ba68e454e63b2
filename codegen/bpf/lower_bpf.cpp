// The BPF back end's driver: from the layout's spec, the API probes' maps, one function per
// (probe, attach point) in its own section, optimization, object emission, and the ProgramSpec
// the runtime loads.
#include "codegen/bpf/lower_bpf.h"

#include <linux/bpf.h>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/bpf/emit_object.h"
#include "codegen/bpf/fault_in.h"
#include "codegen/bpf/ir_helpers.h"
#include "codegen/bpf/lower_api.h"
#include "codegen/bpf/lower_nccl.h"
#include "codegen/bpf/lower_pystack.h"
#include "codegen/bpf/lower_timeline.h"
#include "codegen/bpf/lower_watchpoint.h"
#include "stdlib/enums.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

constexpr const char *kSectionPrefix = "probe_";
// A per-CPU array value is limited to PCPU_MIN_UNIT_SIZE (32 KiB).
constexpr uint32_t kMaxScratch = 32768;

// Null for a gpu provider, which the BPF lowering never lowers.
std::optional<abi::AttachKind> attach_kind(Provider p) {
  switch (p) {
  case Provider::Begin: return abi::AttachKind::Begin;
  case Provider::End: return abi::AttachKind::End;
  case Provider::Interval: return abi::AttachKind::Interval;
  case Provider::Uprobe: return abi::AttachKind::Uprobe;
  case Provider::Uretprobe: return abi::AttachKind::Uretprobe;
  case Provider::Kprobe: return abi::AttachKind::Kprobe;
  case Provider::Kretprobe: return abi::AttachKind::Kretprobe;
  case Provider::Profile: return abi::AttachKind::Profile;
  case Provider::Usdt: return abi::AttachKind::Usdt;
  case Provider::Software: return abi::AttachKind::Software;
  case Provider::Hardware: return abi::AttachKind::Hardware;
  case Provider::Watchpoint:
  case Provider::AsyncWatchpoint: return abi::AttachKind::Watchpoint;
  case Provider::Tracepoint: return abi::AttachKind::Tracepoint;
  case Provider::GpuHang: return abi::AttachKind::Hang;
  case Provider::GpuLaunch: return abi::AttachKind::LaunchEnd;
  case Provider::GpuKprobe:
  case Provider::GpuKretprobe:
  case Provider::GpuBlockBegin:
  case Provider::GpuBlockEnd:
  case Provider::GpuMemory:
  case Provider::GpuBarrier: return std::nullopt;
  }
  return std::nullopt;
}

// Starts a program function in section SECTION (the symbol must not share the section's name):
// the builder is left in its body, past the scratch lookup; returns the block that returns 0.
llvm::BasicBlock *open_probe_function(llvm::Module &mod, const std::string &section,
                                      LowerCtx &c) {
  auto *fty = llvm::FunctionType::get(c.b.getInt64Ty(), {c.b.getPtrTy()}, false);
  c.fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "fn_" + section, mod);
  c.fn->setSection(section);
  c.fn->addFnAttr(llvm::Attribute::NoUnwind);
  c.regs = c.fn->getArg(0);
  auto *entry = llvm::BasicBlock::Create(c.ctx, "entry", c.fn);
  c.b.SetInsertPoint(entry);

  // The scratch area: key 0 of a per-CPU array, so the lookup cannot fail in practice.
  auto *key = c.b.CreateAlloca(c.b.getInt32Ty());
  c.b.CreateStore(c.b.getInt32(0), key);
  c.scratch = call_helper(c, BPF_FUNC_map_lookup_elem, {map_ref(c, c.maps->scratch), key},
                          c.b.getPtrTy());
  auto *body = llvm::BasicBlock::Create(c.ctx, "body", c.fn);
  auto *out = llvm::BasicBlock::Create(c.ctx, "out", c.fn);
  c.b.CreateCondBr(c.b.CreateIsNull(c.scratch), out, body);
  c.b.SetInsertPoint(out);
  c.b.CreateRet(c.b.getInt64(0));
  c.b.SetInsertPoint(body);
  return out;
}

// A program that put nothing in the scratch area does not look it up on each hit.
void drop_unused_scratch(LowerCtx &c) {
  if (c.scratch_used != 0)
    return;
  auto *br = llvm::cast<llvm::BranchInst>(c.fn->getEntryBlock().getTerminator());
  auto *is_null = llvm::cast<llvm::Instruction>(br->getCondition());
  llvm::BranchInst::Create(br->getSuccessor(1), br);
  br->eraseFromParent();
  is_null->eraseFromParent();
  if (auto *lookup = llvm::dyn_cast<llvm::Instruction>(c.scratch); lookup && lookup->use_empty())
    lookup->eraseFromParent();
}

// Lowers one (probe, attach point) into a function in section SECTION, sending its Span event
// first when SPAN_EDGE (--timeline). Returns the scratch bytes it used.
Result<uint32_t> lower_probe_function(llvm::Module &mod, const std::string &section,
                                      LowerCtx &c, bool span_edge) {
  llvm::BasicBlock *out = open_probe_function(mod, section, c);

  // Variables start zeroed, as in bpftrace, whichever branch assigns them first.
  auto pv = c.sema->vars.find(c.probe);
  if (pv != c.sema->vars.end())
    for (const auto &[vname, type] : pv->second)
      if (!type.is_none()) {
        auto &var = c.variable(vname, type);
        if (is_memory_type(var.type))
          zero_bytes(c, var.ptr, 8, var.type.size);
      }
  if (c.skip_agent_threads)
    return_on_agent_thread(c);
  load_saved_args(c);
  if (span_edge)
    send_span_edge(c);

  c.spec->probes[c.probe_index].sleepable = c.opts->fault_in_strings && fault_in_user_strings(c);

  c.lower_probe_body(out);
  c.b.CreateRet(c.b.getInt64(0));
  if (!c.error.empty())
    return make_error(c.error);
  drop_unused_scratch(c);
  return c.scratch_used;
}

// usdt: the sites the driver found (none for other probe types).
Result<std::vector<abi::UsdtSite>> usdt_sites_of(const AttachPoint &ap,
                                                 const BpfCodegenOptions &opts) {
  if (ap.provider != Provider::Usdt)
    return std::vector<abi::UsdtSite>{};
  if (!opts.usdt_sites)
    return make_error("usdt probes are not supported here");
  return opts.usdt_sites(ap);
}

// One site: its probe name names its file as written (the file found, for a wildcard or -p's
// files) and its provider, as bpftrace's `probe` prints it.
void set_usdt_site(const AttachPoint &ap, const abi::UsdtSite &site, abi::ProbeSpec &ps) {
  bool as_written = !ap.target.empty() && ap.target.find_first_of("*?[") == std::string::npos;
  ps.target = site.path;
  ps.func = site.provider + ":" + site.name;
  ps.name = "usdt:" + (as_written ? ap.target : site.path) + ":" + ps.func;
  ps.offset = site.offset;
  ps.semaphore = site.semaphore;
}

// watchpoint: the breakpoint's place; the function form needs the traced program, whose
// function reports the address at run time.
Status set_watchpoint(const AttachPoint &ap, const BpfCodegenOptions &opts, abi::ProbeSpec &ps) {
  ps.offset = ap.watch.address;
  ps.watch_length = ap.watch.length;
  ps.watch_mode = ap.watch.mode;
  ps.watch_async = ap.provider == Provider::AsyncWatchpoint;
  if (ap.watch.arg < 0)
    return Ok{};
  if (opts.traced_program.empty())
    return make_error(ap.name() + ": a watchpoint on a function's argument needs -p PID or -c CMD");
  AttachPoint named = ap;
  named.target = opts.traced_program;
  ps.name = named.name();
  ps.target = opts.traced_program;
  ps.func = ap.func;
  ps.watch_later = true;
  return Ok{};
}

// A probe codegen adds (not written in the script): PS with the body BODY lowers. Returns the
// scratch bytes it used.
uint32_t lower_hidden_probe(llvm::Module &mod, const abi::ProbeSpec &ps, const SemanticInfo &sema,
                            const BpfCodegenOptions &opts, const layout::MapLayout &layout,
                            abi::ProgramSpec &spec, const std::function<void(LowerCtx &)> &body) {
  uint32_t index = spec.probes.size();
  spec.probes.push_back(ps);
  spec.probe_names.push_back(ps.name);
  LowerCtx c(mod);
  c.sema = &sema;
  c.opts = &opts;
  c.probe_index = index;
  c.spec = &spec;
  c.maps = &layout;
  open_probe_function(mod, kSectionPrefix + std::to_string(index), c);
  body(c);
  c.b.CreateRet(c.b.getInt64(0));
  return c.scratch_used;
}

// The name tables of every enum a map or printf value prints by name.
// (A GPU API's enum from the stdlib catalog, else one the script's C definitions name.)
void collect_enums(const abi::ValueType &t, const CTypes &c_types, abi::ProgramSpec &spec) {
  if (t.kind == abi::ValueType::Enum && !spec.enums.count(t.enum_name)) {
    if (const stdlib::EnumTable *table = stdlib::find_enum(t.enum_name))
      spec.enums[t.enum_name] = *table;
    else if (auto it = c_types.enums.find(t.enum_name); it != c_types.enums.end())
      spec.enums[t.enum_name] = it->second;
  }
  for (const auto &e : t.elems)
    collect_enums(e, c_types, spec);
}

void add_enum_tables(const CTypes &c_types, abi::ProgramSpec &spec) {
  for (const auto &m : spec.maps) {
    collect_enums(m.key, c_types, spec);
    collect_enums(m.value, c_types, spec);
  }
  for (const auto &f : spec.formats)
    for (const auto &a : f.args)
      collect_enums(a.type, c_types, spec);
  for (const auto &s : spec.spans)
    for (const auto &a : s.args)
      collect_enums(a.type, c_types, spec);
}

// LLVM's back-end ERRORS as the user's, each at the attach point (WRITTEN, by probe index) whose
// function or for-loop callback it names; in DIAGS where given. Returns the first's text.
Error report_backend_errors(const std::vector<BackendError> &errors, const abi::ProgramSpec &spec,
                            const std::vector<const AttachPoint *> &written,
                            Diagnostics *diags) {
  std::string first;
  for (const BackendError &e : errors) {
    std::string section = e.function ? e.function->getSection().str() : "";
    size_t index = spec.probes.size();
    if (section.rfind(kSectionPrefix, 0) == 0)
      index = std::strtoul(section.c_str() + std::strlen(kSectionPrefix), nullptr, 10);
    std::string name = index < spec.probes.size() ? spec.probes[index].name : "the program";
    const AttachPoint *ap = index < written.size() ? written[index] : nullptr;
    bool in_loop = e.function && e.function->hasInternalLinkage(); // callbacks are internal
    std::string where = name + (in_loop ? ", in a for loop's body" : "");
    std::string text =
        e.message.find("stack limit") != std::string::npos
            ? where + ": the probe needs more than the 512 bytes of BPF stack the kernel allows: "
                      "use fewer variables (each one a for loop's body names takes 16 bytes), "
                      "nest fewer loops, or split the work over several probes"
            : where + ": LLVM's BPF back end cannot compile the probe: " + e.message;
    if (first.empty())
      first = text;
    if (diags)
      diags->error(ap ? ap->span : SourceSpan{}, text);
  }
  return make_error(first);
}

} // namespace

Result<BpfArtifacts> lower_to_bpf(const Program &program, const SemanticInfo &sema,
                                  const layout::ProgramLayout &program_layout,
                                  const BpfCodegenOptions &opts, Diagnostics *diags) {
  BpfArtifacts art;
  abi::ProgramSpec &spec = art.spec;
  spec = program_layout.spec;
  layout::MapLayout layout = program_layout.maps;
  add_api_maps(program, layout, spec);
  add_nccl_maps(program, layout, spec);
  add_python_maps(program, layout, spec);

  llvm::LLVMContext llctx;
  auto mod = std::make_unique<llvm::Module>("gpubt", llctx);
  spec.timeline = opts.timeline;
  if (auto st = prepare_bpf_module(*mod); !st)
    return make_error(st.error());

  uint32_t scratch_size = 8;
  bool gpu_probes = std::any_of(program.probes.begin(), program.probes.end(), [](const auto &p) {
    return layout::is_gpu_probe(*p);
  });
  std::vector<std::pair<uint32_t, const AttachPoint *>> watch_setups; // watchpoint:FUNC+argN
  std::vector<const AttachPoint *> written; // by probe index; a probe codegen adds has none
  for (const auto &probe : program.probes) {
    for (const auto &ap : probe->attach_points) {
      if (is_gpu(ap.provider))
        continue;
      auto sites = usdt_sites_of(ap, opts);
      if (!sites)
        return make_error(sites.error());
      // cuMemAlloc -> cuMemAlloc_v2; per-thread-stream variants (cudaMemcpy_ptds) follow as
      // hidden copies: counted as one probe, skipped where the library lacks them.
      std::vector<std::string> symbols =
          ap.provider == Provider::Usdt ? std::vector<std::string>(sites->size())
                                        : api_attach_symbols(ap);
      for (size_t k = 0; k < symbols.size(); ++k) {
        uint32_t index = spec.probes.size();
        abi::ProbeSpec ps;
        ps.name = ap.name();
        auto kind = attach_kind(ap.provider);
        if (!kind)
          return make_error("BUG: " + ap.raw + " has no host attach kind");
        ps.kind = *kind;
        ps.target = ap.target;
        ps.func = symbols[k];
        ps.hidden = probe->hidden || (k > 0 && ap.provider != Provider::Usdt);
        ps.interval_ns = ap.interval_ns;
        const abi::UsdtSite *site = ap.provider == Provider::Usdt ? &(*sites)[k] : nullptr;
        if (site)
          set_usdt_site(ap, *site, ps);
        if (is_watchpoint(ap.provider)) {
          if (auto st = set_watchpoint(ap, opts, ps); !st)
            return make_error(st.error());
          if (ps.watch_later)
            watch_setups.push_back({index, &ap});
        }
        spec.probes.push_back(ps);
        spec.probe_names.push_back(ps.name);
        written.resize(spec.probes.size());
        written[index] = &ap;

        LowerCtx c(*mod);
        c.sema = &sema;
        c.opts = &opts;
        c.probe = probe.get();
        c.ap = &ap;
        c.usdt = site;
        c.probe_index = index;
        c.spec = &spec;
        c.maps = &layout;
        c.skip_agent_threads = gpu_probes && is_gpu_api_probe(ap);
        auto used = lower_probe_function(*mod, kSectionPrefix + std::to_string(index), c,
                                         opts.timeline && !probe->hidden && is_span_edge(program, ap));
        if (!used)
          return make_error(used.error());
        scratch_size = std::max(scratch_size, *used);
      }
    }
  }
  for (auto [watch_index, ap] : watch_setups) {
    abi::ProbeSpec setup;
    setup.kind = abi::AttachKind::Uprobe;
    setup.target = spec.probes[watch_index].target;
    setup.func = ap->func;
    setup.name = "watchpoint_setup:" + spec.probes[watch_index].name;
    setup.hidden = true;
    bool async = ap->provider == Provider::AsyncWatchpoint;
    uint32_t used = lower_hidden_probe(*mod, setup, sema, opts, layout, spec, [&](LowerCtx &c) {
      lower_watchpoint_setup(c, watch_index, ap->watch.arg, async);
    });
    scratch_size = std::max(scratch_size, used);
  }
  auto hidden = hidden_api_probes(program, layout);
  for (auto &h : hidden_nccl_probes(program, layout))
    hidden.push_back(std::move(h));
  for (auto &h : hidden) {
    uint32_t used = lower_hidden_probe(*mod, h.spec, sema, opts, layout, spec,
                                       [&](LowerCtx &c) { h.lower(c, h.slot); });
    scratch_size = std::max(scratch_size, used);
  }
  add_enum_tables(sema.c_types, spec);
  if (scratch_size > kMaxScratch)
    return make_error("the program needs " + std::to_string(scratch_size) +
                      " bytes of temporaries per CPU, more than the " +
                      std::to_string(kMaxScratch) + " a BPF per-CPU map allows");
  spec.maps[layout.scratch].value_size = scratch_size;

  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(*mod, &vos))
    return make_error("BUG: invalid LLVM IR from the BPF lowering: " + verify_msg);
  if (opts.optimize)
    if (auto st = optimize_bpf_module(*mod); !st)
      return make_error(st.error());
  llvm::raw_string_ostream irs(art.llvm_ir);
  mod->print(irs, nullptr);

  std::vector<BackendError> backend_errors;
  auto obj = emit_bpf_object(*mod, backend_errors);
  if (!obj)
    return backend_errors.empty() ? make_error(obj.error())
                                  : report_backend_errors(backend_errors, spec, written, diags);
  art.object = std::move(*obj);
  auto sections = extract_sections(art.object, kSectionPrefix);
  if (!sections)
    return make_error(sections.error());
  for (size_t i = 0; i < spec.probes.size(); ++i) {
    auto it = sections->find(kSectionPrefix + std::to_string(i));
    if (it == sections->end())
      return make_error("BUG: no section " + std::string(kSectionPrefix) + std::to_string(i) +
                        " in the BPF object");
    spec.probes[i].insns = std::move(it->second);
  }
  return art;
}

} // namespace gpubt::codegen::bpf
