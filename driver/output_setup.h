// How gpubt's own streams behave under bpftrace's -B and --no-warnings.
#pragma once
#include <ostream>
#include <streambuf>
#include <string>

#include "driver/bpftrace_flags.h"

namespace gpubt::driver {

// -B: stdout's buffering (line, full or none); Unset leaves the C library's choice.
void apply_buffering(BufferMode mode);

// --no-warnings: a stream onto `target` that drops each line starting with "WARNING: ".
class WarningFilter : private std::streambuf {
public:
  explicit WarningFilter(std::ostream &target) : target_(target), stream_(this) {}
  ~WarningFilter() override { sync(); }
  std::ostream &stream() { return stream_; }

private:
  int overflow(int c) override;
  int sync() override;
  std::ostream &target_;
  std::ostream stream_;
  std::string line_;
};

} // namespace gpubt::driver
