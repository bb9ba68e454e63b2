// gpu:hang thresholds over the agents' latest running launches (see hang_watch.h).
#include "runtime/run/hang_watch.h"

#include <cerrno>
#include <csignal>

#include "runtime/abi/kernel_name.h"
#include "runtime/abi/launch_ctx.h"
#include "runtime/ptx/kernel_match.h"

namespace gpubt::runtime {
namespace {

// The name `kernel` has in gpu probes for the driver's (mangled) NAME: its demangled base name,
// shortened as on the device (kernel_name.h), so maps keyed by either agree.
std::string device_name(const ptx::KernelNames &names) {
  return abi::device_kernel_name(names.base);
}

} // namespace

HangWatch::HangWatch(const abi::ProgramSpec &spec) {
  for (size_t i = 0; i < spec.probes.size(); ++i)
    if (spec.probes[i].kind == abi::AttachKind::Hang)
      probes_.push_back({i, spec.probes[i].func, spec.probes[i].interval_ns});
}

Status HangWatch::take_from(std::vector<uint8_t> &records, const Fire &fire) {
  return table_.take_from(records, [&](const abi::RunningLaunches &r) {
    any_record_ = true;
    check(r, fire);
  });
}

void HangWatch::check(const abi::RunningLaunches &r, const Fire &fire) {
  auto &fired = fired_[r.pid];
  std::set<std::tuple<size_t, uint64_t, uint64_t>> still; // fired, and still running
  for (const auto &l : r.launches) {
    ptx::KernelNames names = ptx::kernel_names(l.kernel);
    std::string name = device_name(names);
    for (const auto &p : probes_) {
      if (!ptx::kernel_matches(p.pattern, names))
        continue;
      auto key = std::make_tuple(p.index, l.stream, l.seq);
      bool due = r.sent_ns >= l.since_ns && r.sent_ns - l.since_ns >= p.after_ns;
      if (fired.count(key)) {
        still.insert(key);
      } else if (due) {
        abi::HangCtx ctx;
        abi::set_launch_fields(ctx, name, r.pid, l);
        ctx.since_ns = l.since_ns;
        ctx.queued = l.later;
        ctx.exact = l.exact;
        ctx.graph = l.graph_kernels;
        if (map_wait_ns_)
          waiting_.push_back({p.index, ctx, name, r.sent_ns});
        else
          fire(p.index, ctx);
        still.insert(key);
      }
    }
  }
  fired = std::move(still); // a launch no longer listed has finished: its keys go
}

void HangWatch::fire_waiting(const Fire &fire, const CopiedAt &copied_at, uint64_t now_ns,
                             bool all) {
  if (waiting_.empty())
    return;
  std::vector<Waiting> still;
  for (Waiting &w : waiting_) {
    if (all || copied_at(w.ctx.pid) >= w.look_ns || now_ns >= w.look_ns + map_wait_ns_) {
      w.ctx.kernel = reinterpret_cast<uint64_t>(w.name.c_str());
      fire(w.probe, w.ctx);
    } else {
      still.push_back(std::move(w));
    }
  }
  waiting_ = std::move(still);
}

void HangWatch::forget_ended() {
  std::vector<uint32_t> ended;
  for (const auto &[pid, r] : table_.latest())
    if (kill(pid_t(pid), 0) != 0 && errno == ESRCH)
      ended.push_back(pid);
  for (uint32_t pid : ended) {
    table_.forget(pid);
    fired_.erase(pid);
  }
}

std::vector<RunningKernel> HangWatch::oldest(uint64_t now_ns) const {
  std::vector<RunningKernel> out;
  for (const auto &[pid, r] : table_.latest()) {
    const abi::RunningLaunch *first = nullptr;
    for (const auto &l : r.launches)
      if (!first || l.since_ns < first->since_ns)
        first = &l;
    if (first)
      out.push_back({pid, device_name(ptx::kernel_names(first->kernel)),
                     now_ns > first->since_ns ? double(now_ns - first->since_ns) / 1e9 : 0.0});
  }
  return out;
}

} // namespace gpubt::runtime
