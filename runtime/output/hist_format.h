// bpftrace 0.17's hist() and lhist() bodies: the text table with its 52-wide bars and the
// JSON bucket list, trimmed to the first and last non-empty bucket.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::runtime {

// buckets: count per log2 bucket index (see program_spec.h); counts are divided by div.
std::string hist_text(const std::vector<uint64_t> &buckets, uint32_t div);
std::string hist_json(const std::vector<uint64_t> &buckets, uint32_t div);

// buckets: 0 below min, 1 + i per step, the last at or above max.
std::string lhist_text(const std::vector<uint64_t> &buckets, int64_t min, int64_t max,
                       int64_t step);
std::string lhist_json(const std::vector<uint64_t> &buckets, int64_t min, int64_t max,
                       int64_t step);

} // namespace gpubt::runtime
