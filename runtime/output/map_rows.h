// Turns a raw map snapshot into printable rows: per-CPU values merged, hist buckets grouped
// under their user key, rows in the order bpftrace 0.17 prints them.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"
#include "runtime/output/tseries_rows.h"

namespace gpubt::runtime {

struct MapRow {
  std::vector<uint8_t> key;   // the user key (hist, lhist: without the bucket index)
  std::vector<uint8_t> value; // AggKind::None: the stored value
  int64_t num = 0;    // Count, Sum, Min, Max: merged value (bits, if unsigned); Avg, Stats: sum
  uint64_t count = 0; // Avg, Stats: samples
  std::vector<uint64_t> buckets; // Hist, Lhist: count per bucket index
  TimeSeries series;             // Tseries
  int64_t average() const { return count ? num / int64_t(count) : 0; }
};

// Whether the map's printed number is signed (Count is unsigned, Sum follows its ValueType).
bool map_value_signed(const abi::MapSpec &map);

// Rows sorted as bpftrace sorts them: Count/Sum/Min/Max and integer maps by value, Avg/Stats by
// average, Hist/Lhist by total count (ties by key bytes), Tseries by key bytes, other maps by key.
std::vector<MapRow> map_rows(const abi::MapSpec &map, const MapData &data);

} // namespace gpubt::runtime
