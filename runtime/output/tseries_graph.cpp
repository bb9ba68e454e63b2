// bpftrace head's TextEmitter<Value::TimeSeries>, byte for byte: the same widths, the same float
// arithmetic placing each point, and the times in the local time zone.
#include "runtime/output/tseries_graph.h"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <limits>
#include <sstream>

namespace gpubt::runtime {
namespace {

constexpr int kWidth = 53;   // the graph's columns, its two borders included
constexpr int kPadding = 21; // the column the greatest value's text may start after

// The time's fraction of a second the lines show, from the length of an interval.
enum class Unit { S = 0, Ms = 3, Us = 6, Ns = 9 };

Unit unit_of(uint64_t interval_ns) {
  if (interval_ns >= 1000000000)
    return Unit::S;
  if (interval_ns >= 1000000)
    return Unit::Ms;
  if (interval_ns >= 1000)
    return Unit::Us;
  return Unit::Ns;
}

std::string time_of_day(uint64_t ns, Unit unit) {
  std::time_t secs = std::time_t(ns / 1000000000);
  uint64_t frac = ns % 1000000000;
  std::tm tm{};
  localtime_r(&secs, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%H:%M:%S") << std::setfill('0');
  switch (unit) {
  case Unit::Ns:
    out << "." << std::setw(9) << frac;
    break;
  case Unit::Us:
    out << "." << std::setw(6) << frac / 1000;
    break;
  case Unit::Ms:
    out << "." << std::setw(3) << frac / 1000000;
    break;
  case Unit::S:
    break;
  }
  return out.str();
}

struct Scale {
  bool is_signed;
  int64_t min = 0, max = 0;

  bool less(int64_t a, int64_t b) const { return is_signed ? a < b : uint64_t(a) < uint64_t(b); }
  std::string text(int64_t v) const {
    return is_signed ? std::to_string(v) : std::to_string(uint64_t(v));
  }
  // a - b, as bpftrace's distance() answers it for these two values
  static int64_t distance(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
};

// The least and greatest value; equal ones are moved apart by one where they can be.
Scale scale_of(const TimeSeries &ts) {
  Scale s{ts.is_signed};
  bool any = false;
  for (const auto &p : ts.points) {
    if (!p.present)
      continue;
    if (!any || s.less(p.value, s.min))
      s.min = p.value;
    if (!any || s.less(s.max, p.value))
      s.max = p.value;
    any = true;
  }
  if (s.min == s.max) {
    if (s.is_signed ? s.min > std::numeric_limits<int64_t>::min() : s.min != 0)
      s.min--;
    if (s.is_signed ? s.max < std::numeric_limits<int64_t>::max() : uint64_t(s.max) != UINT64_MAX)
      s.max++;
  }
  return s;
}

} // namespace

std::string tseries_graph(const TimeSeries &ts) {
  if (ts.points.empty())
    return "<no data>";
  Scale s = scale_of(ts);
  uint64_t span = ts.points.back().start_ns - ts.points.front().start_ns;
  Unit unit = unit_of(span / (ts.points.size() > 1 ? ts.points.size() - 1 : 1));
  static const char *const kHeads[] = {"hh:mm:ss", "hh:mm:ss.ms", "hh:mm:ss.μs", "hh:mm:ss.ns"};
  std::string head = kHeads[int(unit) / 3];
  size_t time_size = 8 + (unit == Unit::S ? 0 : 1 + size_t(unit));

  std::ostringstream out;
  auto bounds = [&](size_t indent) {
    out << std::string(indent, ' ') << std::setw(kPadding) << std::left << s.text(s.min)
        << std::setw(kWidth - kPadding) << std::right << s.text(s.max) << "\n";
  };
  bounds(time_size + 1);
  out << std::setw(int(time_size + 1)) << std::left << head << "|"
      << std::string(kWidth - 2, '_') << "|\n";

  int zero = 0;
  if (s.is_signed && s.min < 0 && s.max > 0)
    zero = int(float(kWidth) * float(Scale::distance(s.min, 0)) /
               float(Scale::distance(s.min, s.max)));
  for (const auto &p : ts.points) {
    std::string line(kWidth, ' ');
    line.front() = line.back() = '|';
    if (zero > 0)
      line[size_t(zero)] = '.';
    out << time_of_day(p.start_ns, unit) << " ";
    if (!p.present) {
      out << line << " -\n";
      continue;
    }
    int at = kWidth / 2;
    if (s.min != s.max)
      at = int(float(kWidth - 1) * float(Scale::distance(s.min, p.value)) /
               float(Scale::distance(s.min, s.max)));
    line[size_t(std::clamp(at, 0, kWidth - 1))] = '*';
    out << line << " " << s.text(p.value) << "\n";
  }

  std::string bottom(kWidth, '_');
  bottom.front() = bottom.back() = 'v';
  out << std::string(time_size, ' ') << " " << bottom << "\n";
  bounds(time_size + 1);
  return out.str();
}

} // namespace gpubt::runtime
