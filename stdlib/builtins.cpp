// The builtin table. Types and misuse messages are bpftrace 0.17's (`bpftrace -d` shows the
// types); gpu-only rows are gpubt's own.
#include "stdlib/builtins.h"
#include "runtime/abi/python_stack.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace gpubt::stdlib {
namespace {

using frontend::Provider;
using frontend::TypeKind;

constexpr ProviderMask bit(Provider p) { return provider_bit(p); }
constexpr ProviderMask kKernelFn = bit(Provider::Kprobe) | bit(Provider::Kretprobe);
constexpr ProviderMask kHost = bit(Provider::Begin) | bit(Provider::End) |
                               bit(Provider::Interval) | bit(Provider::Profile) |
                               bit(Provider::Uprobe) | bit(Provider::Usdt) |
                               bit(Provider::Software) | bit(Provider::Hardware) |
                               bit(Provider::Watchpoint) | bit(Provider::AsyncWatchpoint) |
                               bit(Provider::Uretprobe) | bit(Provider::Tracepoint) | kKernelFn;
constexpr ProviderMask kMemory = bit(Provider::GpuMemory);
constexpr ProviderMask kGpu = bit(Provider::GpuKprobe) | bit(Provider::GpuKretprobe) |
                              bit(Provider::GpuBlockBegin) | bit(Provider::GpuBlockEnd) | kMemory |
                              bit(Provider::GpuBarrier);
constexpr ProviderMask kHang = bit(Provider::GpuHang); // gpu:hang: the launch's, on the host
// A gpu:kretprobe /last_thread/ run in gpubt per finished launch: what the launch record answers.
constexpr ProviderMask kLaunchEnd = bit(Provider::GpuLaunch);
constexpr ProviderMask kAll = kHost | kGpu;

constexpr std::string_view kHostOnly = "{name} is not available in gpu probes";
constexpr std::string_view kGpuOnly = "{name} is only available in gpu probes";
constexpr std::string_view kMemoryOnly =
    "{name} is only available in gpu memory probes (gpu:mem, gpu:load, gpu:store, gpu:atomic)";

// Every integer builtin of bpftrace 0.17 is an unsigned int64.
#define U64(name, id, allowed, misuse, ...)                                                \
  {name, BuiltinId::id, TypeKind::Integer, 8, false, allowed, misuse __VA_OPT__(, ) __VA_ARGS__}
#define GPU_U64(name, id, ...) U64(name, id, kGpu, kGpuOnly __VA_OPT__(, ) __VA_ARGS__)
#define LAUNCH_U64(name, id) U64(name, id, kGpu | kHang | kLaunchEnd, kGpuOnly, kLaunch)
constexpr Variation kLaunch = Variation::PerLaunch;
constexpr Variation kTime = Variation::OverTime;

constexpr std::array kBuiltins = std::to_array<BuiltinInfo>({
    U64("pid", Pid, kAll | kHang | kLaunchEnd, "", kLaunch),
    U64("tid", Tid, kAll, ""),
    U64("nsecs", Nsecs, kAll | kHang | kLaunchEnd, "", kTime),
    U64("uid", Uid, kHost, kHostOnly, kLaunch),
    U64("gid", Gid, kHost, kHostOnly, kLaunch),
    U64("cpu", Cpu, kHost, kHostOnly),
    {"comm", BuiltinId::Comm, TypeKind::String, 16, false, kHost, kHostOnly, kLaunch},
    U64("elapsed", Elapsed, kHost, kHostOnly, kTime),
    U64("cgroup", Cgroup, kHost, kHostOnly),
    U64("cpid", Cpid, kHost | kHang, kHostOnly),
    U64("rand", Rand, kHost, kHostOnly, kTime),
    U64("curtask", Curtask, kHost, kHostOnly), // the kernel's current task_struct address
    {"username", BuiltinId::Username, TypeKind::Username, 8, false, kHost, kHostOnly},
    U64("numaid", Numaid, kHost, kHostOnly),
    U64("ctx", Ctx, kHost, kHostOnly), // the program's context (pt_regs, a tracepoint record)
    U64("ncpus", Ncpus, kHost, kHostOnly),
    U64("jiffies", Jiffies, kHost, kHostOnly),
    // From the probed thread's registers (1 in begin/end, run from gpubt itself).
    U64("usermode", Usermode,
        bit(Provider::Begin) | bit(Provider::End) | bit(Provider::Uprobe) |
            bit(Provider::Uretprobe) | bit(Provider::Usdt) | kKernelFn |
            bit(Provider::Profile) | bit(Provider::Interval) | bit(Provider::Software) |
            bit(Provider::Hardware),
        "The usermode builtin can not be used with '{probe}' probes"),
    {"probetype", BuiltinId::Probetype, TypeKind::String, 16, false, kHost, kHostOnly},
    // nsecs(boot), nsecs(tai), nsecs(sw_tai): the parser names them so (nsecs(monotonic) is
    // nsecs), so no script can write these names.
    U64("nsecs(boot)", NsecsBoot, kHost, kHostOnly),
    U64("nsecs(tai)", NsecsTai, kHost, kHostOnly),
    U64("nsecs(sw_tai)", NsecsTai, kHost, kHostOnly),
    U64("arg", Arg,
        bit(Provider::Uprobe) | bit(Provider::Usdt) | bit(Provider::Kprobe) |
            bit(Provider::GpuKprobe),
        "The {name} builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes"),
    U64("sarg", Sarg, bit(Provider::Uprobe) | bit(Provider::Kprobe),
        "The {name} builtin can only be used with 'kprobes', 'uprobes' and 'usdt' probes"),
    U64("retval", Retval,
        bit(Provider::Uretprobe) | bit(Provider::Kretprobe) | bit(Provider::GpuKretprobe),
        "The retval builtin can only be used with 'kretprobe' and 'uretprobe' and 'kfunc' "
        "probes{tp_hint}"),
    {"func", BuiltinId::Func, TypeKind::UserSym, 8, false,
     bit(Provider::Uprobe) | bit(Provider::Uretprobe) | kKernelFn | kGpu,
     "The func builtin can not be used with '{probe}' probes"},
    {"probe", BuiltinId::Probe, TypeKind::Probe, 8, false, kAll | kHang | kLaunchEnd, "",
     kLaunch},
    // kUstackFrames (32) return addresses, innermost first. begin and end have none: an
    // empty stack, as bpftrace head prints (0.17 refused them).
    {"ustack", BuiltinId::Ustack, TypeKind::UStack, 8 * 32, false,
     bit(Provider::Uprobe) | bit(Provider::Uretprobe) | bit(Provider::Usdt) |
         bit(Provider::Tracepoint) | bit(Provider::Begin) | bit(Provider::End),
     "The ustack builtin can not be used with '{probe}' probes"},
    // Python frames of the thread's CPython interpreter (runtime/abi/python_stack.h).
    {"pystack", BuiltinId::Pystack, TypeKind::PyStack, abi::pystack_size(abi::kPyStackFrames),
     false,
     bit(Provider::Uprobe) | bit(Provider::Uretprobe) | bit(Provider::Usdt) |
         bit(Provider::Tracepoint) | bit(Provider::Profile),
     "The pystack builtin can not be used with '{probe}' probes"},
    // kKstackFrames (32) kernel return addresses, innermost first.
    {"kstack", BuiltinId::Kstack, TypeKind::KStack, 8 * 32, false,
     kKernelFn | bit(Provider::Tracepoint) | bit(Provider::Profile) | bit(Provider::Uprobe) |
         bit(Provider::Uretprobe) | bit(Provider::Usdt) | bit(Provider::Software) |
         bit(Provider::Hardware) | bit(Provider::Interval) | bit(Provider::Begin) |
         bit(Provider::End),
     "The kstack builtin can not be used with '{probe}' probes"},
    {"args", BuiltinId::Args, TypeKind::None, 0, false,
     bit(Provider::Tracepoint) | bit(Provider::Uprobe) | bit(Provider::GpuKprobe) |
         bit(Provider::GpuKretprobe) | kHang,
     "The args builtin can only be used with tracepoint/kfunc/uprobeprobes ({ptype} used here)"},
    GPU_U64("tid_x", TidX), GPU_U64("tid_y", TidY), GPU_U64("tid_z", TidZ),
    GPU_U64("bid_x", BidX), GPU_U64("bid_y", BidY), GPU_U64("bid_z", BidZ),
    LAUNCH_U64("bdim_x", BdimX), LAUNCH_U64("bdim_y", BdimY), LAUNCH_U64("bdim_z", BdimZ),
    LAUNCH_U64("gdim_x", GdimX), LAUNCH_U64("gdim_y", GdimY), LAUNCH_U64("gdim_z", GdimZ),
    GPU_U64("lane", Lane), GPU_U64("warp", Warp), GPU_U64("sm", Sm),
    GPU_U64("clock", Clock, kTime),
    // The instrumented kernel's name: a constant per instrumented kernel.
    {"kernel", BuiltinId::Kernel, TypeKind::String, 64, false, kGpu | kHang | kLaunchEnd,
     kGpuOnly, kLaunch},
    // Per launch: the first thread's entry `nsecs` (gpu:hang: the earliest the launch can have
    // begun); 1 in the launch's last thread to exit.
    // The warp's lanes active at the probe, as a u32 mask (__activemask(); a SPIR-V subgroup's
    // ballot): popcount(active_lanes) is how many run together there. Over time: a
    // gpu:kretprobe reading it runs at the exit, where lanes may have parted.
    {"active_lanes", BuiltinId::ActiveLanes, TypeKind::Integer, 4, false, kGpu, kGpuOnly, kTime},
    U64("launch_start", LaunchStart,
        bit(Provider::GpuKretprobe) | bit(Provider::GpuBlockEnd) | kHang | kLaunchEnd,
        "{name} is only available in gpu:kretprobe, gpu:block_end and gpu:hang probes", kTime),
    U64("last_thread", LastThread, bit(Provider::GpuKretprobe) | kLaunchEnd,
        "{name} is only available in gpu:kretprobe probes", kTime),
    // The host's launch call, CLOCK_MONOTONIC. A launch-level probe: the call's start, from
    // CUPTI's record of it (0 where there is none). A probe on the GPU:
    // the latest cuLaunchKernel* entry, from a hidden uprobe (launch_call_uprobe.h; 0 before any).
    U64("launch_call", LaunchCall, kGpu | kLaunchEnd,
        "{name} is only available in gpu probes (on the GPU or once per finished launch)", kLaunch),
    // The access a memory probe runs at (the Compute Sanitizer's memory callback's arguments):
    // its address as the program's pointer, its bytes, load/store/atomic, global/shared/local.
    U64("addr", Addr, kMemory, kMemoryOnly),
    U64("access_size", AccessSize, kMemory, kMemoryOnly),
    {"access", BuiltinId::Access, TypeKind::String, 8, false, kMemory, kMemoryOnly},
    {"space", BuiltinId::Space, TypeKind::String, 8, false, kMemory, kMemoryOnly},
    // The distinct 32-byte sectors (addr >> 5) of the lanes making this access together.
    U64("sectors", Sectors, kMemory, kMemoryOnly),
    // The request's extra shared-memory wavefronts from bank conflicts (0 outside shared memory).
    U64("bank_conflicts", BankConflicts, kMemory, kMemoryOnly),
    U64("barrier_id", BarrierId, bit(Provider::GpuBarrier),
        "{name} is only available in gpu:barrier probes"),
});

#undef GPU_U64
#undef LAUNCH_U64
#undef U64

void replace_all(std::string &s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

} // namespace

std::string_view probe_type_name(Provider p) {
  switch (p) {
  case Provider::Begin:
  case Provider::End:
    return "special";
  default:
    return provider_type_name(p);
  }
}

BuiltinUse find_builtin(std::string_view name) {
  for (auto [prefix, id] : {std::pair{std::string_view("arg"), BuiltinId::Arg},
                            std::pair{std::string_view("sarg"), BuiltinId::Sarg}}) {
    if (name.size() == prefix.size() + 1 && name.substr(0, prefix.size()) == prefix &&
        name.back() >= '0' && name.back() <= '9')
      for (const auto &b : kBuiltins)
        if (b.id == id)
          return {&b, name.back() - '0'};
  }
  for (const auto &b : kBuiltins)
    if (b.name == name && b.id != BuiltinId::Arg && b.id != BuiltinId::Sarg)
      return {&b, -1};
  return {};
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const auto &b : kBuiltins) {
    bool numbered = b.id == BuiltinId::Arg || b.id == BuiltinId::Sarg;
    for (int n = 0; n < (numbered ? 10 : 1); ++n)
      names.push_back(std::string(b.name) + (numbered ? std::to_string(n) : ""));
  }
  return names;
}

std::string builtin_for_cuda_spelling(std::string_view base, std::string_view field) {
  static constexpr std::pair<std::string_view, std::string_view> kCuda[] = {
      {"threadIdx", "tid_"}, {"blockIdx", "bid_"}, {"blockDim", "bdim_"}, {"gridDim", "gdim_"}};
  if (field != "x" && field != "y" && field != "z")
    return "";
  for (auto [cuda, ours] : kCuda)
    if (base == cuda)
      return std::string(ours) + std::string(field);
  return "";
}

const BuiltinInfo &builtin_info(BuiltinId id) {
  for (const auto &b : kBuiltins)
    if (b.id == id)
      return b;
  std::abort(); // every id has its row
}

frontend::Type builtin_type(const BuiltinInfo &info) {
  // Built field by field: stdlib links below frontend, so no frontend functions here.
  frontend::Type t;
  t.kind = info.kind;
  t.size = info.size;
  t.is_signed = info.is_signed;
  return t;
}

bool builtin_allowed(const BuiltinInfo &info, Provider p) {
  return (info.allowed & provider_bit(p)) != 0;
}

std::string builtin_misuse_message(const BuiltinInfo &info, std::string_view name, Provider p) {
  // gpu:hang runs on the host for a launch: the rows' host/gpu messages would mislead.
  std::string msg(p == Provider::GpuHang
                      ? "{name} is not available in gpu:hang probes (they run in gpubt when a "
                        "launch has run too long: pid, kernel, nsecs, launch_start, gdim_*, "
                        "bdim_*, probe, cpid and args.stream/device/seq/queued/exact are)"
                      : info.misuse);
  replace_all(msg, "{name}", name);
  replace_all(msg, "{probe}", provider_type_name(p));
  replace_all(msg, "{ptype}", probe_type_name(p));
  replace_all(msg, "{tp_hint}", p == Provider::Tracepoint ? " (try to use args->ret instead)" : "");
  return msg;
}

std::string_view provider_type_name(Provider p) {
  switch (p) {
  case Provider::Begin:
    return "BEGIN";
  case Provider::End:
    return "END";
  case Provider::Interval:
    return "interval";
  case Provider::Uprobe:
    return "uprobe";
  case Provider::Uretprobe:
    return "uretprobe";
  case Provider::Tracepoint:
    return "tracepoint";
  case Provider::GpuKprobe:
    return "gpu:kprobe";
  case Provider::GpuKretprobe:
  case Provider::GpuLaunch:
    return "gpu:kretprobe";
  case Provider::GpuBlockBegin:
    return "gpu:block_begin";
  case Provider::GpuBlockEnd:
    return "gpu:block_end";
  case Provider::GpuHang:
    return "gpu:hang";
  case Provider::GpuMemory:
    return "gpu:mem";
  case Provider::GpuBarrier:
    return "gpu:barrier";
  case Provider::Kprobe:
    return "kprobe";
  case Provider::Kretprobe:
    return "kretprobe";
  case Provider::Profile:
    return "profile";
  case Provider::Usdt:
    return "usdt";
  case Provider::Watchpoint:
    return "watchpoint";
  case Provider::AsyncWatchpoint:
    return "asyncwatchpoint";
  case Provider::Software:
    return "software";
  case Provider::Hardware:
    return "hardware";
  }
  return "?";
}

} // namespace gpubt::stdlib
