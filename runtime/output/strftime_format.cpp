// Monotonic ns -> wall clock: the offset between CLOCK_REALTIME and CLOCK_MONOTONIC now.
#include "runtime/output/strftime_format.h"

#include <cstdio>
#include <ctime>

namespace gpubt::runtime {

std::string format_strftime(const std::string &format, uint64_t monotonic_ns) {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  int64_t offset = (int64_t(real.tv_sec) - mono.tv_sec) * 1000000000LL + real.tv_nsec - mono.tv_nsec;
  int64_t wall_ns = int64_t(monotonic_ns) + offset;
  std::time_t secs = wall_ns / 1000000000LL;
  long micros = long((wall_ns % 1000000000LL) / 1000);
  // %f is not strftime's: replace it before strftime sees it (%%f stays a literal "%f").
  std::string fmt;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      if (format[i + 1] == 'f') {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%06ld", micros);
        fmt += buf;
      } else {
        fmt += format.substr(i, 2);
      }
      ++i;
      continue;
    }
    fmt += format[i];
  }
  struct tm tm;
  char out[64]; // bpftrace's STRING_SIZE
  if (!localtime_r(&secs, &tm) || std::strftime(out, sizeof out, fmt.c_str(), &tm) == 0)
    return "";
  return out;
}

} // namespace gpubt::runtime
