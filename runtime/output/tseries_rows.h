// tseries() maps read as bpftrace's head reads them: per key, each slot's latest interval with
// the CPUs' values folded, then the last num_intervals intervals of the map as one series.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::runtime {

// One key's intervals, oldest first: from its oldest interval among the map's last
// num_intervals to the map's newest, an interval it has no value for `present` false.
struct TimeSeries {
  struct Point {
    uint64_t start_ns = 0; // the interval's start: wall-clock nanoseconds since 1970
    bool present = false;
    int64_t value = 0;     // the bits of a uint64 when !is_signed
  };
  bool is_signed = true;
  std::vector<Point> points;
};

struct TimeSeriesRow {
  std::vector<uint8_t> key; // the user key (without the slot word)
  TimeSeries series;
};

// The rows in order of key bytes, as bpftrace's std::map keyed by the key prints them.
std::vector<TimeSeriesRow> tseries_rows(const abi::MapSpec &map, const MapData &data);

} // namespace gpubt::runtime
