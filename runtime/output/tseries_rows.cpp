// bpftrace head's reduce_tseries_value and build_time_series: each CPU keeps its own value of a
// slot; the slot's newest epoch is the one read, its CPUs' values folded by the aggregation.
#include "runtime/output/tseries_rows.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace gpubt::runtime {

using abi::TseriesAgg;

namespace {

abi::TseriesValue load(const std::vector<uint8_t> &v) {
  abi::TseriesValue t{};
  if (v.size() >= sizeof t)
    std::memcpy(&t, v.data(), sizeof t);
  return t;
}

struct Reduced {
  uint64_t epoch = 0;
  int64_t value = 0;
};

bool less(int64_t a, int64_t b, bool is_signed) {
  return is_signed ? a < b : uint64_t(a) < uint64_t(b);
}

// One slot over the CPUs. A slot no CPU set reads as epoch 0, value 0, as bpftrace reads it.
Reduced reduce_slot(const MapEntry &e, TseriesAgg agg, bool is_signed) {
  std::map<uint64_t, abi::TseriesValue> by_epoch;
  for (const auto &bytes : e.values) {
    abi::TseriesValue v = load(bytes);
    if (v.epoch == 0)
      continue;
    auto [it, fresh] = by_epoch.try_emplace(v.epoch, v);
    if (fresh)
      continue;
    abi::TseriesValue &cur = it->second;
    switch (agg) {
    case TseriesAgg::Last: // meta: when it was set
      if (v.meta > cur.meta)
        cur = v;
      break;
    case TseriesAgg::Avg:
      cur.value += v.value;
      cur.meta += v.meta;
      break;
    case TseriesAgg::Sum:
      cur.value += v.value;
      break;
    case TseriesAgg::Min:
      if (less(v.value, cur.value, is_signed))
        cur.value = v.value;
      break;
    case TseriesAgg::Max:
      if (less(cur.value, v.value, is_signed))
        cur.value = v.value;
      break;
    }
  }
  if (by_epoch.empty())
    return {};
  abi::TseriesValue latest = by_epoch.rbegin()->second;
  if (agg == TseriesAgg::Avg && latest.meta)
    latest.value = is_signed ? latest.value / int64_t(latest.meta)
                             : int64_t(uint64_t(latest.value) / latest.meta);
  return {latest.epoch, latest.value};
}

} // namespace

std::vector<TimeSeriesRow> tseries_rows(const abi::MapSpec &map, const MapData &data) {
  bool is_signed = map.value.kind == abi::ValueType::Int;
  std::map<std::vector<uint8_t>, std::map<uint64_t, int64_t>> by_key; // key -> epoch -> value
  uint64_t last = 0;
  bool any = false;
  for (const MapEntry &e : data) {
    if (e.key.size() < 8)
      continue;
    std::vector<uint8_t> key(e.key.begin(), e.key.end() - 8);
    Reduced r = reduce_slot(e, map.tseries_agg, is_signed);
    by_key[key].try_emplace(r.epoch, r.value);
    last = std::max(last, r.epoch);
    any = true;
  }
  // The map's newest interval and the num_intervals before it (bpftrace's uint64 arithmetic:
  // with fewer intervals since 1970 than kept, the range is empty).
  uint64_t range_last = any ? last : UINT64_MAX;
  uint64_t range_first = range_last - map.tseries_intervals + 1;
  std::vector<TimeSeriesRow> rows;
  for (auto &[key, values] : by_key) {
    TimeSeriesRow row{key, {is_signed, {}}};
    // From the key's oldest interval in the range; a key with none there shows the newest
    // interval, empty.
    auto first = values.lower_bound(range_first);
    uint64_t from = first == values.end() ? range_last : std::min(first->first, range_last);
    for (uint64_t epoch = std::max(from, range_first); epoch <= range_last; epoch++) {
      auto v = values.find(epoch);
      row.series.points.push_back({epoch * map.tseries_interval_ns, v != values.end(),
                                   v != values.end() ? v->second : 0});
      if (epoch == UINT64_MAX)
        break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace gpubt::runtime
