// The tables bpftrace 0.17 documents for software and hardware probes (reference guide).
#include "runtime/bpf/perf_event_names.h"
#include <linux/perf_event.h>

namespace gpubt::runtime {
namespace {

constexpr PerfEventName kSoftware[] = {
    {"alignment-faults", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
    {"bpf-output", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
    {"cpu-clock", "cpu", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000},
    {"cpu-migrations", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
    {"dummy", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 1},
    {"emulation-faults", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 1},
    {"major-faults", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
    {"minor-faults", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100},
    {"task-clock", "", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1},
};

constexpr PerfEventName kHardware[] = {
    {"backend-stalls", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
    {"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     100000},
    {"branch-misses", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 100000},
    {"bus-cycles", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 100000},
    {"cache-misses", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1000000},
    {"cache-references", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
    {"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000},
    {"frontend-stalls", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
    {"instructions", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1000000},
    {"ref-cycles", "", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
};

} // namespace

std::span<const PerfEventName> software_events() { return kSoftware; }
std::span<const PerfEventName> hardware_events() { return kHardware; }

const PerfEventName *find_perf_event(const std::string &kind, const std::string &name) {
  auto table = kind == "software" ? software_events() : hardware_events();
  for (const auto &e : table)
    if (name == e.name || (*e.alias && name == e.alias))
      return &e;
  return nullptr;
}

} // namespace gpubt::runtime
