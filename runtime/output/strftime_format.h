// strftime(fmt, nsecs): a monotonic-clock timestamp (bpftrace's nsecs) as local wall-clock
// time, with bpftrace's %f extension (microseconds, 6 digits).
#pragma once
#include <cstdint>
#include <string>

namespace gpubt::runtime {

std::string format_strftime(const std::string &format, uint64_t monotonic_ns);

} // namespace gpubt::runtime
