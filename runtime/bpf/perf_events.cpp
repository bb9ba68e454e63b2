// perf_event_open for uprobe, tracepoint and software events, and attaching BPF to them.
#include "runtime/bpf/perf_events.h"

#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

const char *uprobe_pmu_dir = "/sys/bus/event_source/devices/uprobe";
const char *kprobe_pmu_dir = "/sys/bus/event_source/devices/kprobe";

int read_pmu_type(const char *dir) {
  std::ifstream f(std::string(dir) + "/type");
  int type = -1;
  f >> type;
  return type;
}

// format/retprobe reads "config:0": the bit of attr.config that asks for a return probe.
int read_retprobe_bit(const char *dir) {
  std::ifstream f(std::string(dir) + "/format/retprobe");
  std::string s;
  f >> s;
  auto colon = s.find(':');
  return colon == std::string::npos ? 0 : std::atoi(s.c_str() + colon + 1);
}

Result<UniqueFd> open_event(perf_event_attr &attr, int pid, const char *what) {
  attr.size = sizeof(attr);
  // A system-wide event (pid -1) must name a CPU; the BPF program still runs on every CPU.
  int cpu = pid > 0 ? -1 : 0;
  int fd = syscall(__NR_perf_event_open, &attr, pid > 0 ? pid : -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return make_error(std::string("perf_event_open (") + what + "): " + strerror(errno));
  return UniqueFd(fd);
}

struct ProbePmu {
  const char *dir, *what, *ret_what;
  int type, ret_bit;
};

// The uprobe and kprobe PMUs: config picks a return probe, config1 names the path or the
// kernel function, config2 is the offset into it.
Result<UniqueFd> open_probe_event(const ProbePmu &pmu, const std::string &name, uint64_t offset,
                                  bool retprobe, int pid, uint64_t ref_ctr_offset = 0) {
  if (pmu.type < 0)
    return make_error(std::string("this kernel has no ") + pmu.what + " PMU (" + pmu.dir + ")");
  perf_event_attr attr{};
  attr.type = pmu.type;
  // The uprobe PMU's format/ref_ctr_offset is config:32-63: the kernel counts the USDT
  // semaphore there up while the probe is installed in a process, and down after.
  attr.config = (retprobe ? (1ull << pmu.ret_bit) : 0) | ref_ctr_offset << 32;
  attr.config1 = reinterpret_cast<uint64_t>(name.c_str());
  attr.config2 = offset;
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  return open_event(attr, pid, retprobe ? pmu.ret_what : pmu.what);
}

} // namespace

Result<UniqueFd> open_uprobe_event(const std::string &path, uint64_t offset, bool retprobe,
                                   int pid, uint64_t ref_ctr_offset) {
  static const ProbePmu pmu{uprobe_pmu_dir, "uprobe", "uretprobe", read_pmu_type(uprobe_pmu_dir),
                            read_retprobe_bit(uprobe_pmu_dir)};
  return open_probe_event(pmu, path, offset, retprobe, pid, ref_ctr_offset);
}

Result<UniqueFd> open_kprobe_event(const std::string &func, bool retprobe) {
  static const ProbePmu pmu{kprobe_pmu_dir, "kprobe", "kretprobe", read_pmu_type(kprobe_pmu_dir),
                            read_retprobe_bit(kprobe_pmu_dir)};
  return open_probe_event(pmu, func, 0, retprobe, -1);
}

Result<UniqueFd> open_tracepoint_event(int tp_id) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = tp_id;
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  return open_event(attr, -1, "tracepoint");
}

Result<UniqueFd> open_cpu_event(uint32_t type, uint64_t config, uint64_t period, int cpu,
                                const std::string &what) {
  perf_event_attr attr{};
  attr.type = type;
  attr.config = config;
  attr.sample_period = period;
  attr.size = sizeof(attr);
  int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return make_error("perf_event_open (" + what + ", cpu " + std::to_string(cpu) +
                      "): " + strerror(errno));
  return UniqueFd(fd);
}

Result<UniqueFd> open_breakpoint_event(uint64_t address, uint32_t length, const std::string &mode,
                                       int pid, int cpu) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.size = sizeof(attr);
  for (char c : mode)
    attr.bp_type |= c == 'r' ? HW_BREAKPOINT_R : c == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
  attr.bp_addr = address;
  // An execute breakpoint covers one instruction: the kernel wants sizeof(long).
  attr.bp_len = attr.bp_type == HW_BREAKPOINT_X ? sizeof(long) : length;
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  int fd = syscall(__NR_perf_event_open, &attr, pid > 0 ? pid : -1, pid > 0 ? -1 : cpu, -1,
                   PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return make_error(std::string("perf_event_open (watchpoint): ") + strerror(errno));
  return UniqueFd(fd);
}

Result<UniqueFd> open_profile_event(uint64_t period_ns, int cpu) {
  return open_cpu_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, period_ns, cpu, "profile");
}

Result<UniqueFd> open_interval_event(uint64_t period_ns) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  return open_event(attr, -1, "interval");
}

Status attach_bpf_to_event(int event_fd, int prog_fd) {
  if (ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0)
    return make_error(std::string("PERF_EVENT_IOC_SET_BPF: ") + strerror(errno));
  if (ioctl(event_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
    return make_error(std::string("PERF_EVENT_IOC_ENABLE: ") + strerror(errno));
  return Ok{};
}

Result<UniqueFd> attach_bpf_to_event(int event_fd, int prog_fd, uint64_t cookie) {
  LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event = {.bpf_cookie = cookie});
  UniqueFd link(bpf_link_create(prog_fd, event_fd, BPF_PERF_EVENT, &opts));
  if (!link.valid())
    return make_error(std::string("BPF_LINK_CREATE: ") + strerror(errno));
  if (ioctl(event_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
    return make_error(std::string("PERF_EVENT_IOC_ENABLE: ") + strerror(errno));
  return link;
}

} // namespace gpubt::runtime
