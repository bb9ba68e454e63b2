// Small helpers on AST nodes.
#include "frontend/ast.h"

namespace gpubt::frontend {

bool is_gpu(Provider p) {
  return p == Provider::GpuKprobe || p == Provider::GpuKretprobe || is_gpu_block(p) ||
         p == Provider::GpuMemory || p == Provider::GpuBarrier;
}

bool is_gpu_block(Provider p) {
  return p == Provider::GpuBlockBegin || p == Provider::GpuBlockEnd;
}

bool is_builtin(const Expr &e, BuiltinId id) {
  return e.kind == ExprKind::Builtin && e.as<BuiltinExpr>().id == id;
}

bool is_call(const Expr &e, FunctionId id) {
  return e.kind == ExprKind::Call && e.as<CallExpr>().id == id;
}

bool is_watchpoint(Provider p) {
  return p == Provider::Watchpoint || p == Provider::AsyncWatchpoint;
}

std::string AttachPoint::name() const {
  switch (provider) {
  case Provider::Begin: // bpftrace spells them lowercase since 0.22; 0.17's scripts say BEGIN
    return raw == "begin" ? "begin" : "BEGIN";
  case Provider::End:
    return raw == "end" ? "end" : "END";
  case Provider::Interval:
    if (interval_ns % 1000000000 == 0)
      return "interval:s:" + std::to_string(interval_ns / 1000000000);
    if (interval_ns % 1000000 == 0)
      return "interval:ms:" + std::to_string(interval_ns / 1000000);
    if (interval_ns % 1000 == 0)
      return "interval:us:" + std::to_string(interval_ns / 1000);
    return "interval:ns:" + std::to_string(interval_ns);
  case Provider::Uprobe:
    return "uprobe:" + target + ":" + func;
  case Provider::Uretprobe:
    return "uretprobe:" + target + ":" + func;
  case Provider::Tracepoint:
    return "tracepoint:" + target + ":" + func;
  case Provider::GpuKprobe:
    return "gpu:kprobe:" + func;
  case Provider::GpuKretprobe:
  case Provider::GpuLaunch:
    return "gpu:kretprobe:" + func;
  case Provider::GpuBlockBegin:
    return "gpu:block_begin:" + func;
  case Provider::GpuBlockEnd:
    return "gpu:block_end:" + func;
  case Provider::GpuMemory:
    return "gpu:" + target + (ns.empty() ? "" : ":" + ns) + ":" + func;
  case Provider::GpuBarrier:
    return "gpu:barrier:" + func;
  case Provider::GpuHang:
    return "gpu:hang:" + func + (target.empty() ? "" : ":" + target);
  case Provider::Kprobe:
    return "kprobe:" + func;
  case Provider::Kretprobe:
    return "kretprobe:" + func;
  case Provider::Profile:
    return "profile:" + target + ":" + func;
  case Provider::Software:
    return "software:" + target + ":" + func;
  case Provider::Hardware:
    return "hardware:" + target + ":" + func;
  case Provider::Watchpoint:
  case Provider::AsyncWatchpoint: {
    // bpftrace's: the address in decimal, or the traced program's function (target, once known)
    std::string where = watch.arg < 0 ? std::to_string(watch.address)
                                      : (target.empty() ? "" : target + ":") + func;
    return std::string(provider == Provider::Watchpoint ? "watchpoint:" : "asyncwatchpoint:") +
           where + ":" + std::to_string(watch.length) + ":" + watch.mode;
  }
  case Provider::Usdt:
    return "usdt:" + target + ":" + (ns.empty() ? "" : ns + ":") + func;
  }
  return raw;
}

} // namespace gpubt::frontend
