// bpftrace's software:NAME and hardware:NAME events: perf's event names (and bpftrace's short
// aliases), their perf_event_attr type and config, and the period a probe without a count uses.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace gpubt::runtime {

struct PerfEventName {
  const char *name, *alias; // alias "" when none
  uint32_t type;            // PERF_TYPE_SOFTWARE / PERF_TYPE_HARDWARE
  uint64_t config;
  uint64_t default_period;
};

std::span<const PerfEventName> software_events();
std::span<const PerfEventName> hardware_events();

// The event NAME (or alias) of KIND ("software" / "hardware"); nullptr when unknown.
const PerfEventName *find_perf_event(const std::string &kind, const std::string &name);

} // namespace gpubt::runtime
