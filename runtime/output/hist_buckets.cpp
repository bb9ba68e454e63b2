// Mirrors bpftrace 0.17's hist_prepare/lhist_prepare and the bounds its printers compute,
// including their int truncations, so that labels and JSON bounds match byte for byte.
#include "runtime/output/hist_buckets.h"

namespace gpubt::runtime {

namespace {

struct Range {
  int first = -1, last = -1, max_value = 0; // first == -1: nothing to print
};

// bpftrace reads each count into an int before comparing; so do we.
Range nonzero_range(const std::vector<uint64_t> &values) {
  Range r;
  for (size_t i = 0; i < values.size(); i++) {
    int v = int(values[i]);
    if (v > 0) {
      if (r.first == -1)
        r.first = int(i);
      r.last = int(i);
    }
    if (v > r.max_value)
      r.max_value = v;
  }
  return r;
}

std::string hist_index_label(int power) {
  static const struct {
    int power;
    char suffix;
  } units[] = {{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (auto u : units)
    if (power >= u.power)
      return std::to_string(1LL << (power - u.power)) + u.suffix;
  return std::to_string(1LL << power);
}

std::string lhist_index_label(int64_t number) {
  const int64_t kilo = 1024, mega = 1048576;
  if (number == 0)
    return "0";
  if (number % mega == 0)
    return std::to_string(number / mega) + "M";
  if (number % kilo == 0)
    return std::to_string(number / kilo) + "K";
  return std::to_string(number);
}

// bpftrace computes JSON bounds as `long x = 1ULL << n` up to bucket 32; bucket 33 (the last
// one its 32-bit log2 reaches) comes out as min -2147483648, max 0, which we keep.
Bucket hist_bucket(int i) {
  switch (i) {
  case 0:
    return {"(..., 0)", "", "-1"};
  case 1:
    return {"[0]", "0", "0"};
  case 2:
    return {"[1]", "1", "1"};
  }
  std::string label = "[" + hist_index_label(i - 2) + ", " + hist_index_label(i - 1) + ")";
  if (i == 33)
    return {label, "-2147483648", "0"};
  uint64_t high = i - 1 < 64 ? (1ULL << (i - 1)) - 1 : UINT64_MAX;
  return {label, std::to_string(1ULL << (i - 2)), std::to_string(high)};
}

Bucket lhist_bucket(int64_t i, int64_t steps, int64_t min, int64_t max, int64_t step) {
  if (i == 0)
    return {"(..., " + lhist_index_label(min) + ")", "", std::to_string(min - 1)};
  if (i == steps + 1)
    return {"[" + lhist_index_label(max) + ", ...)", std::to_string(max), ""};
  int64_t low = (i - 1) * step + min, high = i * step + min;
  return {"[" + lhist_index_label(low) + ", " + lhist_index_label(high) + ")", std::to_string(low),
          std::to_string(high - 1)};
}

} // namespace

HistBuckets hist_buckets(const std::vector<uint64_t> &counts, uint32_t div) {
  Range r = nonzero_range(counts);
  HistBuckets out;
  out.max_value = r.max_value;
  for (int i = r.first; r.first != -1 && i <= r.last; i++) {
    Bucket b = hist_bucket(i);
    // Bucket i > 0 holds [2^(i-2), 2^(i-1)); bucket 33's JSON bounds are bpftrace's overflow.
    uint64_t high = i - 1 < 64 ? (1ULL << (i - 1)) - 1 : UINT64_MAX;
    b.le = i == 0 ? "-1" : std::to_string(high);
    b.count = counts[i] / (div ? div : 1);
    b.raw = counts[i];
    out.buckets.push_back(std::move(b));
  }
  return out;
}

// lhist_prepare trims zeros over buckets 0 .. steps+1 only, and never divides.
HistBuckets lhist_buckets(const std::vector<uint64_t> &counts, int64_t min, int64_t max,
                          int64_t step) {
  int64_t steps = step ? (max - min) / step : 0;
  Range r = nonzero_range(counts);
  HistBuckets out;
  out.max_value = r.max_value;
  if (r.first == -1)
    return out;
  int first = -1, last = 0;
  for (int64_t i = 0; i <= steps + 1 && size_t(i) < counts.size(); i++) {
    if (counts[i] > 0) {
      if (first == -1)
        first = int(i);
      last = int(i);
    }
  }
  for (int i = first == -1 ? 0 : first; i <= last; i++) {
    Bucket b = lhist_bucket(i, steps, min, max, step);
    b.le = b.max;
    b.count = b.raw = counts[i];
    out.buckets.push_back(std::move(b));
  }
  return out;
}

} // namespace gpubt::runtime
