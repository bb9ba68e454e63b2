// hist() and lhist() buckets as bpftrace 0.17 prepares them (Output::hist_prepare,
// lhist_prepare): trimmed to the first and last non-empty bucket, each with its bounds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct Bucket {
  std::string label;    // the text table's label: "[4, 8)", "(..., 0)", "[1K, ...)"
  std::string min, max; // the bounds as bpftrace's JSON gives them; "" for an open end
  std::string le;       // the true inclusive upper bound (metrics' le); "" for +Inf
  uint64_t count = 0;   // as printed (hist: divided by div)
  uint64_t raw = 0;     // before div: the bar's length
};

struct HistBuckets {
  std::vector<Bucket> buckets; // empty: nothing to print
  int max_value = 0;           // the largest count (bpftrace reads each into an int)
};

// buckets: count per log2 bucket index (see program_spec.h); counts are divided by div.
HistBuckets hist_buckets(const std::vector<uint64_t> &counts, uint32_t div);

// counts: 0 below min, 1 + i per step, the last at or above max.
HistBuckets lhist_buckets(const std::vector<uint64_t> &counts, int64_t min, int64_t max,
                          int64_t step);

} // namespace gpubt::runtime
