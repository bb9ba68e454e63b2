// perf_event_open for uprobe, tracepoint and software events, and attaching BPF to them.
#include "runtime/bpf/perf_events.h"
#include <cerrno>
#include <cstring>
#include <fstream>
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

} // namespace

Result<UniqueFd> open_uprobe_event(const std::string &path, uint64_t offset, bool retprobe,
                                   int pid) {
  static const int type = read_pmu_type(uprobe_pmu_dir);
  static const int ret_bit = read_retprobe_bit(uprobe_pmu_dir);
  if (type < 0)
    return make_error("this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
  perf_event_attr attr{};
  attr.type = type;
  attr.config = retprobe ? (1ull << ret_bit) : 0;
  attr.config1 = reinterpret_cast<uint64_t>(path.c_str()); // uprobe_path
  attr.config2 = offset;                                   // probe_offset
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  return open_event(attr, pid, retprobe ? "uretprobe" : "uprobe");
}

Result<UniqueFd> open_kprobe_event(const std::string &func, bool retprobe) {
  static const int type = read_pmu_type(kprobe_pmu_dir);
  static const int ret_bit = read_retprobe_bit(kprobe_pmu_dir);
  if (type < 0)
    return make_error("this kernel has no kprobe PMU (/sys/bus/event_source/devices/kprobe)");
  perf_event_attr attr{};
  attr.type = type;
  attr.config = retprobe ? (1ull << ret_bit) : 0;
  attr.config1 = reinterpret_cast<uint64_t>(func.c_str()); // kprobe_func
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  return open_event(attr, -1, retprobe ? "kretprobe" : "kprobe");
}

Result<UniqueFd> open_tracepoint_event(int tp_id) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = tp_id;
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  return open_event(attr, -1, "tracepoint");
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

} // namespace gpubt::runtime
