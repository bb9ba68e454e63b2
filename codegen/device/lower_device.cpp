// Device lowering's driver: one patch function per (gpu probe, attach point) over the layout's
// device maps, the hidden launch-state probes, optimization and the target's image.
#include "codegen/device/lower_device.h"

#include <algorithm>
#include <functional>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/device/device_context.h"
#include "codegen/device/probe_point.h"
#include "frontend/ast_walk.h"
#include "stdlib/builtins.h"

namespace gpubt::codegen::device {

using namespace frontend;

namespace {

// The lanes that came to the probe, as a mask ptxas keeps apart from every later activemask: it
// held all of a function's activemask reads in one register, so one read inside a leader's
// branch (a keyed update's) overwrote the entry mask that the exit syncs (SASS of the bank case,
// H200). A match on the probe's context pointer (the same in every lane) is that mask, but not
// one the compiler can fold back.
llvm::Value *held_lanes(DevCtx &c, llvm::Value *ud) {
  return c.target.match_any(c.b, active_lanes(c), c.b.CreatePtrToInt(ud, c.b.getInt64Ty()));
}

// Syncs the lanes CAME and goes on to OUT once they run together again. One warp sync is not
// always enough: after a lane ran a keyed update's loops alone (its slot search, the wait for a
// slot being claimed), the others had gone on without it and, synced, still ran as two groups
// into the kernel's next instructions, each a request of its own (H200, the bank case: 3581
// store requests for 2048; with the retry, 2048). Bounded: a warp the hardware keeps apart
// leaves as before.
void leave_together(DevCtx &c, llvm::Value *came, llvm::BasicBlock *out) {
  constexpr uint32_t kTries = 8;
  auto &b = c.b;
  auto *from = b.GetInsertBlock();
  auto *again = llvm::BasicBlock::Create(c.ctx, "leave.sync", c.fn);
  b.CreateBr(again);
  b.SetInsertPoint(again);
  auto *tried = b.CreatePHI(b.getInt32Ty(), 2);
  tried->addIncoming(b.getInt32(0), from);
  c.target.warp_sync(b, came);
  auto *next = b.CreateAdd(tried, b.getInt32(1));
  tried->addIncoming(next, again);
  auto *together = b.CreateICmpEQ(active_lanes(c), came);
  b.CreateCondBr(b.CreateOr(together, b.CreateICmpUGE(next, b.getInt32(kTries))), out, again);
}

bool uses_builtin(const Probe &p, stdlib::BuiltinId id) { return first_use(p, id) != nullptr; }

// NAME_direct runs BODY (given a ctx); the target adds how its injector calls it (PTX: NAME, a
// Compute Sanitizer patch that tests the probe's bit in the ctx first).
void lower_probe_functions(DevCtx &c, const std::string &name, uint32_t probe_bit,
                           const std::function<void(llvm::BasicBlock *out)> &body) {
  auto &b = c.b;
  auto *fty = probe_function_type(c);
  auto *direct = llvm::Function::Create(fty, llvm::Function::ExternalLinkage,
                                        name + GPUBT_PROBE_DIRECT_SUFFIX, c.mod);
  direct->addFnAttr(llvm::Attribute::NoUnwind);
  c.fn = direct;
  auto *entry = llvm::BasicBlock::Create(c.ctx, "entry", c.fn);
  auto *start = llvm::BasicBlock::Create(c.ctx, "body", c.fn);
  auto *out = llvm::BasicBlock::Create(c.ctx, "out", c.fn);
  b.SetInsertPoint(out);
  b.CreateRet(b.getInt32(GPUBT_PATCH_SUCCESS));
  b.SetInsertPoint(entry);
  llvm::Value *ud = c.fn->getArg(0);
  b.CreateCondBr(b.CreateIsNull(ud), out, start);
  // The lanes that came in together leave together: a probe's elected lanes and searches part
  // them, and a memory probe after it at the same access saw fewer lanes (H200: sectors per
  // request 3/7/31 for 4/8/32, on both backends), the kernel's own code ran diverged.
  llvm::BasicBlock *exit = out;
  c.came_lanes = nullptr;
  if (!c.target.lockstep_lanes()) {
    b.SetInsertPoint(start);
    llvm::Value *came = c.came_lanes = held_lanes(c, ud);
    exit = llvm::BasicBlock::Create(c.ctx, "leave", c.fn);
    b.SetInsertPoint(exit);
    leave_together(c, came, out);
  }
  b.SetInsertPoint(start);
  c.userdata = c.target.probe_context(b, ud);
  skip_other_accesses(c, exit);
  body(exit);
  b.CreateBr(exit);
  c.target.add_probe_entry(c.mod, *direct, name, probe_bit);
}

// `last_thread`: every thread leaving counts itself in the launch's launch_exited (one atomic
// per warp, by its lowest active lane); the lane that brings the count to the grid's threads
// is the last. i64 0/1. The add is acquire-release: each leader's add releases what its lane
// wrote before (launch_start's min: the entry leader is the lowest lane, so it leads at exit
// too), and the last one's add, reading the end of their release sequences, acquires all of
// it: the last thread's probe sees every warp's launch_start (Vulkan memory model; relaxed, it
// was only likely on hardware whose atomics all meet in L2).
llvm::Value *count_exit(DevCtx &c) {
  auto &b = c.b;
  c.spec->device.features |= abi::DeviceLaunchState;
  llvm::Value *mask = active_lanes(c);
  auto warp = elect_lowest_lane(c, mask);
  auto *n = b.CreateZExt(b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, mask), b.getInt64Ty());
  auto *is_leader = warp.elected(b);
  auto *pre = b.GetInsertBlock();
  auto *add = llvm::BasicBlock::Create(c.ctx, "exit.count", c.fn);
  auto *join = llvm::BasicBlock::Create(c.ctx, "exit.counted", c.fn);
  b.CreateCondBr(is_leader, add, join);
  b.SetInsertPoint(add);
  auto *exited = b.CreateGEP(b.getInt8Ty(), c.userdata,
                             b.getInt64(offsetof(gpubt_device_ctx, launch_exited)));
  auto *before =
      atomic_rmw(c, llvm::AtomicRMWInst::Add, exited, n, llvm::AtomicOrdering::AcquireRelease);
  b.CreateBr(join);
  b.SetInsertPoint(join);
  auto *old = b.CreatePHI(b.getInt64Ty(), 2);
  old->addIncoming(b.getInt64(0), pre);
  old->addIncoming(before, add);
  llvm::Value *total = b.getInt64(1);
  for (Dim d : {Dim::X, Dim::Y, Dim::Z})
    total = b.CreateMul(b.CreateMul(total, c.target.grid_dim(b, d)), c.target.block_dim(b, d));
  auto *last = b.CreateAnd(is_leader, b.CreateICmpEQ(b.CreateAdd(old, n), total));
  return b.CreateZExt(last, b.getInt64Ty());
}

// The launch is over once its last thread has run the probe: that thread sets launch_start and
// launch_exited back for the kernel's next launch, which stream order (or a graph's edges) puts
// after this one. So the agent need not reset them before every launch: that was a stream write
// per traced launch, and in a CUDA graph it ran before the whole graph, not before each node.
// In the launch's last thread (c.last_thread): its GpuLaunchRecord when SEND (--timeline), then
// launch_start and launch_exited back to their start when RESET.
void end_launch(DevCtx &c, bool send, bool reset, llvm::Value *end_ns = nullptr) {
  auto &b = c.b;
  auto *last = llvm::BasicBlock::Create(c.ctx, "launch.end", c.fn);
  auto *done = llvm::BasicBlock::Create(c.ctx, "launch.next", c.fn);
  b.CreateCondBr(b.CreateICmpNE(c.last_thread, b.getInt64(0)), last, done);
  b.SetInsertPoint(last);
  if (send)
    send_launch_record(c, end_ns);
  if (reset) {
    store_release(c, byte_ptr(c, c.userdata, offsetof(gpubt_device_ctx, launch_start)),
                  b.getInt64(UINT64_MAX));
    store_release(c, byte_ptr(c, c.userdata, offsetof(gpubt_device_ctx, launch_exited)),
                  b.getInt64(0));
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

// The launch's end for its --timeline record, read by its last thread as it leaves, before the
// script's probe runs: read after it, the record would also time the probe's own map updates (a
// few us: spans a log2 bucket above what kerneltime.bt's `nsecs - launch_start` says).
llvm::Value *clock_in_last_thread(DevCtx &c) {
  auto &b = c.b;
  auto *from = b.GetInsertBlock();
  auto *read = llvm::BasicBlock::Create(c.ctx, "launch.clock", c.fn);
  auto *join = llvm::BasicBlock::Create(c.ctx, "launch.clocked", c.fn);
  b.CreateCondBr(b.CreateICmpNE(c.last_thread, b.getInt64(0)), read, join);
  b.SetInsertPoint(read);
  llvm::Value *now = device_nsecs(c);
  auto *read_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  auto *end = b.CreatePHI(b.getInt64Ty(), 2, "launch.end_ns");
  end->addIncoming(b.getInt64(0), from);
  end->addIncoming(now, read_end);
  return end;
}

// The values of the lanes that came to the probe together (the warp's request), read before the
// predicate or an `if` narrows them: `/leader/ { @s = sum(sectors); }` sums the request's
// sectors, not the leader's one, and `active_lanes` after a keyed update (whose searches part the
// lanes for a while) is still the request's.
void read_request_values(DevCtx &c) {
  using stdlib::BuiltinId;
  if (uses_builtin(*c.probe, BuiltinId::ActiveLanes))
    c.request.lanes = c.came_lanes ? c.came_lanes : active_lanes(c);
  if (uses_builtin(*c.probe, BuiltinId::Sectors))
    c.request.sectors = access_sectors(c);
  if (uses_builtin(*c.probe, BuiltinId::BankConflicts))
    c.request.bank_conflicts = access_bank_conflicts(c);
}

void lower_patch_function(DevCtx &c, const std::string &name, uint32_t probe_bit) {
  lower_probe_functions(c, name, probe_bit, [&](llvm::BasicBlock *out) {
    read_request_values(c);
    // Counted before the predicate: every thread leaving counts, whether the probe runs or not.
    bool counts = uses_builtin(*c.probe, stdlib::BuiltinId::LastThread);
    llvm::Value *end_ns = nullptr;
    if (counts) {
      c.last_thread = count_exit(c);
      if (c.spec->timeline)
        end_ns = c.launch_end_ns = clock_in_last_thread(c);
    }
    auto *finished = counts ? llvm::BasicBlock::Create(c.ctx, "probe.done", c.fn) : out;
    if (is_gpu_block(c.provider)) { // counted by every thread; the body runs in one
      auto *edge = c.provider == Provider::GpuBlockBegin ? enter_block(c) : leave_block(c);
      auto *run = llvm::BasicBlock::Create(c.ctx, "block.edge", c.fn);
      c.b.CreateCondBr(edge, run, finished);
      c.b.SetInsertPoint(run);
    }
    c.lower_probe_body(finished);
    if (counts) {
      c.b.CreateBr(finished);
      c.b.SetInsertPoint(finished);
      end_launch(c, c.spec->timeline, true, end_ns);
    }
    c.launch_end_ns = nullptr;
    c.request = {};
  });
}

// --timeline's hidden exit probe, where no probe of the script counts last_thread: counts the
// threads leaving and, in the last, sends the launch's record (and resets the state unless the
// agent does: RESET).
void lower_launch_end_function(DevCtx &c, const std::string &name, uint32_t probe_bit,
                               bool reset) {
  lower_probe_functions(c, name, probe_bit, [&](llvm::BasicBlock *) {
    c.last_thread = count_exit(c);
    end_launch(c, true, reset);
  });
}

// `launch_start`'s hidden entry probe: the launch's earliest thread entry time, by an atomic
// min from each warp's lowest lane, skipped once the value there is already earlier (so after
// the first warps only a load). Only that lane reads the clock and the slot: a %globaltimer read
// in every thread cost kerneltime.bt a third of its time on a PyTorch training step.
void lower_launch_start_function(DevCtx &c, const std::string &name, uint32_t probe_bit) {
  lower_probe_functions(c, name, probe_bit, [&](llvm::BasicBlock *) {
    auto &b = c.b;
    c.spec->device.features |= abi::DeviceLaunchState;
    auto warp = elect_lowest_lane(c, active_lanes(c));
    auto *lead = llvm::BasicBlock::Create(c.ctx, "start.lead", c.fn);
    auto *update = llvm::BasicBlock::Create(c.ctx, "start.update", c.fn);
    auto *done = llvm::BasicBlock::Create(c.ctx, "start.done", c.fn);
    b.CreateCondBr(warp.elected(b), lead, done);
    b.SetInsertPoint(lead);
    auto *now = device_nsecs(c);
    auto *slot = b.CreateGEP(b.getInt8Ty(), c.userdata,
                             b.getInt64(offsetof(gpubt_device_ctx, launch_start)));
    auto *seen = load_relaxed(c, slot);
    b.CreateCondBr(b.CreateICmpULT(now, seen), update, done);
    b.SetInsertPoint(update);
    atomic_rmw(c, llvm::AtomicRMWInst::UMin, slot, now);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  });
}

// Where AP's probe runs: a gpu:kretprobe whose result is the same at entry runs there.
abi::ProbePoint probe_point(const AttachPoint &ap, const Probe &probe) {
  switch (ap.provider) {
  case Provider::GpuMemory: {
    uint32_t kind = ap.target == "load"     ? uint32_t(abi::AccessRead)
                    : ap.target == "store"  ? uint32_t(abi::AccessWrite)
                    : ap.target == "atomic" ? uint32_t(abi::AccessAtomic)
                                            : 0u;
    uint32_t space = ap.ns == "global"   ? uint32_t(abi::AccessGlobal)
                     : ap.ns == "shared" ? uint32_t(abi::AccessShared)
                     : ap.ns == "local"  ? uint32_t(abi::AccessLocal)
                                         : 0u;
    return {abi::ProbePointKind::MemoryAccess, kind | space};
  }
  case Provider::GpuBarrier:
    return {abi::ProbePointKind::Barrier};
  case Provider::GpuBlockEnd:
    return {abi::ProbePointKind::Exit};
  case Provider::GpuKretprobe:
    if (!same_result_at_entry(probe))
      return {abi::ProbePointKind::Exit};
    [[fallthrough]];
  default:
    return {abi::ProbePointKind::Entry};
  }
}

} // namespace

// A hidden gpu probe's spec, numbered after the others.
static Result<abi::DeviceProbeSpec>
hidden_probe(const std::string &kind, const std::string &pattern, const abi::ProgramSpec &spec) {
  uint32_t n = spec.device.probes.size();
  if (n == 64)
    return make_error("more than 64 gpu probes");
  abi::DeviceProbeSpec ps;
  ps.name = "gpu:" + kind + ":" + pattern;
  ps.kernel = pattern;
  ps.point.kind = kind == "kretprobe" ? abi::ProbePointKind::Exit : abi::ProbePointKind::Entry;
  ps.function = GPUBT_PROBE_FUNCTION_PREFIX + std::to_string(n);
  return ps;
}

static void add_unique(std::vector<std::string> &v, const std::string &s) {
  if (std::find(v.begin(), v.end(), s) == v.end())
    v.push_back(s);
}

// gpu:block_begin without gpu:block_end (or the other way round): the other side of the block's
// word, as a hidden probe on the same kernel pattern (check_launch_state allows one).
static Status add_block_state(const Program &program, llvm::Module &mod,
                              const DeviceTarget &target, abi::ProgramSpec &spec) {
  const AttachPoint *sides[2] = {nullptr, nullptr};
  for (const auto &probe : program.probes)
    for (const auto &ap : probe->attach_points)
      if (is_gpu_block(ap.provider))
        sides[ap.provider == Provider::GpuBlockEnd] = &ap;
  for (int end = 0; end < 2; ++end) {
    const AttachPoint *there = sides[!end];
    if (sides[end] || !there)
      continue;
    auto ps = hidden_probe(end ? "kretprobe" : "kprobe", there->func, spec);
    if (!ps)
      return make_error(ps.error());
    DevCtx c(mod, target);
    c.spec = &spec;
    lower_probe_functions(c, ps->function, spec.device.probes.size(), [&](llvm::BasicBlock *) {
      end ? leave_block(c) : enter_block(c);
    });
    if (!c.error.empty())
      return make_error(there->name() + ": " + c.error);
    spec.device.probes.push_back(std::move(*ps));
  }
  return Ok{};
}

// launch_start / last_thread: per-launch state the agent resets (DeviceProgramSpec::
// launch_state), and for launch_start a hidden entry probe on each kernel pattern using it.
// --timeline (spec.timeline) needs both on the kernels the gpu probes trace: the script's
// last_thread probe sends the launch records, else a hidden exit probe does, on the one kernel
// pattern the script's gpu probes share (two patterns may match one kernel, whose threads two
// counting probes would count twice).
Status add_launch_state(const Program &program, llvm::Module &mod, const DeviceTarget &target,
                        abi::ProgramSpec &spec, std::vector<std::string> *warnings) {
  std::vector<std::string> patterns, all_patterns;
  std::string counting_pattern;
  int counting = 0;
  bool reads_start_elsewhere = false;
  for (const auto &probe : program.probes) {
    if (!layout::is_gpu_probe(*probe))
      continue;
    bool start = uses_builtin(*probe, stdlib::BuiltinId::LaunchStart);
    bool last = uses_builtin(*probe, stdlib::BuiltinId::LastThread);
    reads_start_elsewhere = reads_start_elsewhere || (start && !last);
    counting += last ? int(probe->attach_points.size()) : 0;
    spec.device.launch_state = spec.device.launch_state || start || last;
    for (const auto &ap : probe->attach_points) {
      if (start)
        add_unique(patterns, ap.func);
      if (last)
        counting_pattern = ap.func;
      add_unique(all_patterns, ap.func);
    }
  }
  if (counting > 1) // check_launch_state refuses it: each would count the same threads again
    return make_error("BUG: last_thread is counted by more than one gpu probe");
  // A launch-level probe run in gpubt (Provider::GpuLaunch): the agent times every launch, and
  // gpubt draws the spans from those records; the device sends none (no exit probe for them).
  bool device_spans = spec.timeline && std::none_of(program.probes.begin(), program.probes.end(),
                                                    [](const auto &p) {
                                                      return !p->attach_points.empty() &&
                                                             p->attach_points[0].provider ==
                                                                 Provider::GpuLaunch;
                                                    });
  bool hidden_end = false;
  if (device_spans && counting == 1) {
    add_unique(patterns, counting_pattern);
  } else if (device_spans && all_patterns.size() == 1) {
    hidden_end = true;
    counting = 1;
    add_unique(patterns, all_patterns[0]);
  } else if (device_spans && warnings) {
    warnings->push_back("--timeline: no GPU launch spans: the gpu probes name " +
                        std::to_string(all_patterns.size()) +
                        " kernel patterns; launch spans need one pattern, or one gpu probe "
                        "that uses last_thread");
  }
  // The probe counting last_thread resets the state at each launch's end (end_launch);
  // launch_start read elsewhere, on kernels that probe may not cover, still needs the agent.
  if (counting == 1 && !reads_start_elsewhere)
    spec.device.launch_state = false;
  if (hidden_end) {
    auto ps = hidden_probe("kretprobe", all_patterns[0], spec);
    if (!ps)
      return make_error(ps.error());
    DevCtx c(mod, target);
    c.spec = &spec;
    lower_launch_end_function(c, ps->function, spec.device.probes.size(),
                              !spec.device.launch_state);
    if (!c.error.empty())
      return make_error("--timeline: " + c.error);
    spec.device.probes.push_back(std::move(*ps));
  }
  for (const auto &pattern : patterns) {
    auto ps = hidden_probe("kprobe", pattern, spec);
    if (!ps)
      return make_error(ps.error());
    DevCtx c(mod, target);
    c.spec = &spec;
    lower_launch_start_function(c, ps->function, spec.device.probes.size());
    if (!c.error.empty())
      return make_error("launch_start: " + c.error);
    spec.device.probes.push_back(std::move(*ps));
  }
  return Ok{};
}

Status lower_device_probes(const Program &program, const SemanticInfo &sema,
                           const layout::ProgramLayout &layout, const DeviceTarget &target,
                           const DeviceCodegenOptions &opts, abi::ProgramSpec &spec,
                           std::string *llvm_ir) {
  auto pow2 = [](uint32_t n) { return n && !(n & (n - 1)); };
  if (!pow2(opts.ring_capacity) || opts.ring_capacity < 256)
    return make_error("device map and ring capacities must be powers of two");
  if (!layout::has_gpu_probes(program))
    return Ok{};
  spec.device.ring_capacity = opts.ring_capacity;

  llvm::LLVMContext llctx;
  llvm::Module mod("gpubt_device", llctx);
  target.prepare_module(mod);
  uint32_t slot_cache_used = 0;
  for (const auto &probe : program.probes) {
    if (!layout::is_gpu_probe(*probe))
      continue;
    for (const auto &ap : probe->attach_points) {
      uint32_t n = spec.device.probes.size();
      if (n == 64)
        return make_error("more than 64 gpu probes");
      abi::DeviceProbeSpec ps;
      ps.name = ap.name();
      ps.kernel = ap.func;
      ps.point = probe_point(ap, *probe);
      if (!target.supports(ps.point.kind))
        return make_error(ap.name() + ": " + target.name() + " probes cannot run at " +
                          abi::probe_point_name(ps.point.kind) +
                          (ps.point.kind == abi::ProbePointKind::MemoryAccess ||
                                   ps.point.kind == abi::ProbePointKind::Barrier
                               ? " (CUDA kernels can: the ptx and sass backends)"
                               : ""));
      ps.function = GPUBT_PROBE_FUNCTION_PREFIX + std::to_string(n);
      DevCtx c(mod, target);
      c.point = ps.point;
      c.sema = &sema;
      c.probe = probe.get();
      c.probe_name_index = spec.probe_names.size();
      c.spec = &spec;
      c.maps = &layout.device_maps;
      if (target.slot_cache())
        c.slot_cache_used = &slot_cache_used;
      c.provider = ap.provider;
      spec.probe_names.push_back(ps.name);
      lower_patch_function(c, ps.function, n);
      if (!c.error.empty())
        return make_error(ap.name() + ": " + c.error);
      spec.device.probes.push_back(std::move(ps));
    }
  }
  if (auto st = add_launch_state(program, mod, target, spec, opts.warnings); !st)
    return st;
  if (auto st = add_block_state(program, mod, target, spec); !st)
    return st;
  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(mod, &vos))
    return make_error("BUG: invalid LLVM IR from the device lowering: " + verify_msg);
  if (opts.optimize)
    target.optimize(mod);
  if (llvm_ir) {
    llvm::raw_string_ostream irs(*llvm_ir);
    mod.print(irs, nullptr);
  }
  auto image = target.emit(mod);
  if (!image)
    return make_error(image.error());
  target.add_probe_calls(*image, spec.device.probes);
  if (image->format == abi::DeviceFormat::Ptx)
    spec.device.ptx = std::move(image->bytes);
  else
    spec.device.images.push_back(std::move(*image));
  return Ok{};
}

} // namespace gpubt::codegen::device
