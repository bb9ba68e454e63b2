// Mirrors bpftrace 0.17's Output::hist_prepare/lhist_prepare and the Text/Json hist printers,
// including their int truncations, so that labels, bars and JSON bounds match byte for byte.
#include "runtime/output/hist_format.h"

#include <iomanip>
#include <sstream>

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

std::string hist_label(int i) {
  switch (i) {
  case 0:
    return "(..., 0)";
  case 1:
    return "[0]";
  case 2:
    return "[1]";
  default:
    return "[" + hist_index_label(i - 2) + ", " + hist_index_label(i - 1) + ")";
  }
}

void bar_line(std::ostringstream &out, const std::string &label, uint64_t shown, uint64_t raw,
              int max_value) {
  const int max_width = 52;
  int bar_width = int(raw / float(max_value) * max_width);
  out << std::setw(16) << std::left << label << std::setw(8) << std::right << shown << " |"
      << std::setw(max_width) << std::left << std::string(bar_width, '@') << "|\n";
}

// bpftrace computes JSON bounds as `long x = 1ULL << n` up to bucket 32; bucket 33 (the last
// one its 32-bit log2 reaches) comes out as min -2147483648, max 0, which we keep.
void hist_json_bounds(std::ostringstream &out, int i) {
  if (i == 0) {
    out << "\"max\": -1, ";
  } else if (i == 1) {
    out << "\"min\": 0, \"max\": 0, ";
  } else if (i == 2) {
    out << "\"min\": 1, \"max\": 1, ";
  } else if (i == 33) {
    out << "\"min\": -2147483648, \"max\": 0, ";
  } else {
    uint64_t low = 1ULL << (i - 2);
    uint64_t high = i - 1 < 64 ? (1ULL << (i - 1)) - 1 : UINT64_MAX;
    out << "\"min\": " << low << ", \"max\": " << high << ", ";
  }
}

struct LhistRange {
  int64_t buckets; // steps, not counting the two open buckets
  Range r;
};

// lhist_prepare: trims zeros over buckets 0 .. steps+1 only.
LhistRange lhist_range(const std::vector<uint64_t> &values, int64_t min, int64_t max,
                       int64_t step) {
  LhistRange lr{step ? (max - min) / step : 0, nonzero_range(values)};
  if (lr.r.first == -1)
    return lr;
  int first = -1, last = 0;
  for (int64_t i = 0; i <= lr.buckets + 1 && size_t(i) < values.size(); i++) {
    if (values[i] > 0) {
      if (first == -1)
        first = int(i);
      last = int(i);
    }
  }
  lr.r.first = first == -1 ? 0 : first;
  lr.r.last = last;
  return lr;
}

} // namespace

std::string hist_text(const std::vector<uint64_t> &buckets, uint32_t div) {
  Range r = nonzero_range(buckets);
  std::ostringstream out;
  if (r.first == -1)
    return "";
  for (int i = r.first; i <= r.last; i++)
    bar_line(out, hist_label(i), buckets[i] / (div ? div : 1), buckets[i], r.max_value);
  return out.str();
}

std::string hist_json(const std::vector<uint64_t> &buckets, uint32_t div) {
  Range r = nonzero_range(buckets);
  if (r.first == -1)
    return "[]";
  std::ostringstream out;
  out << "[";
  for (int i = r.first; i <= r.last; i++) {
    out << (i > r.first ? ", " : "") << "{";
    hist_json_bounds(out, i);
    out << "\"count\": " << buckets[i] / (div ? div : 1) << "}";
  }
  out << "]";
  return out.str();
}

std::string lhist_text(const std::vector<uint64_t> &buckets, int64_t min, int64_t max,
                       int64_t step) {
  LhistRange lr = lhist_range(buckets, min, max, step);
  if (lr.r.first == -1)
    return "";
  std::ostringstream out;
  for (int i = lr.r.first; i <= lr.r.last; i++) {
    std::string label;
    if (i == 0)
      label = "(..., " + lhist_index_label(min) + ")";
    else if (i == lr.buckets + 1)
      label = "[" + lhist_index_label(max) + ", ...)";
    else
      label = "[" + lhist_index_label((i - 1) * step + min) + ", " +
              lhist_index_label(i * step + min) + ")";
    bar_line(out, label, buckets[i], buckets[i], lr.r.max_value);
  }
  return out.str();
}

std::string lhist_json(const std::vector<uint64_t> &buckets, int64_t min, int64_t max,
                       int64_t step) {
  LhistRange lr = lhist_range(buckets, min, max, step);
  if (lr.r.first == -1)
    return "[]";
  std::ostringstream out;
  out << "[";
  for (int i = lr.r.first; i <= lr.r.last; i++) {
    out << (i > lr.r.first ? ", " : "") << "{";
    if (i == 0)
      out << "\"max\": " << min - 1 << ", ";
    else if (i == lr.buckets + 1)
      out << "\"min\": " << max << ", ";
    else
      out << "\"min\": " << (i - 1) * step + min << ", \"max\": " << i * step + min - 1 << ", ";
    out << "\"count\": " << buckets[i] << "}";
  }
  out << "]";
  return out.str();
}

} // namespace gpubt::runtime
