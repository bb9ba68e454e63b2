// Per-CPU merging and bpftrace 0.17's print order. bpftrace sorts with std::sort (not stable)
// over the kernel's iteration order, or over a std::map keyed by key bytes for hist and stats
// maps; we do the same so that ties come out where bpftrace puts them.
#include "runtime/output/map_rows.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "runtime/output/value.h"

namespace gpubt::runtime {

using abi::AggKind;
using abi::ValueType;

namespace {

constexpr size_t kHistBuckets = 66; // index 0 .. 2 + 63

template <class T> T load(const std::vector<uint8_t> &v, size_t off) {
  T x{};
  if (v.size() >= off + sizeof(T))
    std::memcpy(&x, v.data() + off, sizeof(T));
  return x;
}

uint64_t sum_u64(const MapEntry &e) {
  uint64_t s = 0;
  for (auto &v : e.values)
    s += load<uint64_t>(v, 0);
  return s;
}

// Min/Max: the extreme over the CPUs that saw a value; 0 when none did (as after zero()).
int64_t merge_min_max(const MapEntry &e, bool is_min) {
  bool any = false;
  int64_t best = 0;
  for (auto &v : e.values) {
    if (!load<uint64_t>(v, 8))
      continue;
    int64_t x = load<int64_t>(v, 0);
    if (!any || (is_min ? x < best : x > best))
      best = x;
    any = true;
  }
  return best;
}

MapRow scalar_row(const abi::MapSpec &map, const MapEntry &e) {
  MapRow row;
  row.key = e.key;
  switch (map.agg) {
  case AggKind::Min:
  case AggKind::Max:
    row.num = merge_min_max(e, map.agg == AggKind::Min);
    break;
  case AggKind::None:
    if (!e.values.empty())
      row.value = e.values.front();
    break;
  default:
    row.num = int64_t(sum_u64(e));
  }
  return row;
}

// bpftrace's sort_by_key: a stable sort per key argument, last argument first; integers
// compare unsigned, strings with strncmp, other types keep their order.
void sort_by_key(const ValueType &key, std::vector<MapRow> &rows) {
  std::vector<std::pair<const ValueType *, uint32_t>> args;
  if (key.kind == ValueType::Tuple) {
    for (size_t i = 0; i < key.elems.size(); i++)
      args.push_back({&key.elems[i], i < key.offsets.size() ? key.offsets[i] : 0});
  } else if (key.kind != ValueType::None) {
    args.push_back({&key, 0});
  }
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    const ValueType &t = *it->first;
    uint32_t off = it->second;
    auto fits = [&](const MapRow &r) { return r.key.size() >= off + t.size; };
    if (t.kind == ValueType::Int || t.kind == ValueType::UInt || t.kind == ValueType::Bool) {
      std::stable_sort(rows.begin(), rows.end(), [&](const MapRow &a, const MapRow &b) {
        if (!fits(a) || !fits(b))
          return false;
        return uint64_t(read_int(a.key.data() + off, t.size, false)) <
               uint64_t(read_int(b.key.data() + off, t.size, false));
      });
    } else if (t.kind == ValueType::String) {
      std::stable_sort(rows.begin(), rows.end(), [&](const MapRow &a, const MapRow &b) {
        if (!fits(a) || !fits(b))
          return false;
        return strncmp(reinterpret_cast<const char *>(a.key.data() + off),
                       reinterpret_cast<const char *>(b.key.data() + off), t.size) < 0;
      });
    }
  }
}

template <class K> void sort_by(std::vector<MapRow> &rows, K key) {
  std::sort(rows.begin(), rows.end(),
            [&](const MapRow &a, const MapRow &b) { return key(a) < key(b); });
}

std::vector<MapRow> plain_rows(const abi::MapSpec &map, const MapData &data) {
  std::vector<MapRow> rows;
  for (auto &e : data)
    rows.push_back(scalar_row(map, e));
  bool is_signed = map_value_signed(map);
  bool by_value = map.agg != AggKind::None || map.value.kind == ValueType::Int ||
                  map.value.kind == ValueType::UInt || map.value.kind == ValueType::Enum;
  if (!by_value) {
    sort_by_key(map.key, rows);
  } else if (map.agg == AggKind::None) {
    auto v = [&](const MapRow &r) {
      return r.value.size() >= map.value.size ? value_as_int(map.value, r.value.data()) : 0;
    };
    if (is_signed)
      sort_by(rows, v);
    else
      sort_by(rows, [&](const MapRow &r) { return uint64_t(v(r)); });
  } else if (is_signed) {
    sort_by(rows, [](const MapRow &r) { return r.num; });
  } else {
    sort_by(rows, [](const MapRow &r) { return uint64_t(r.num); });
  }
  return rows;
}

std::vector<MapRow> stats_rows(const MapData &data) {
  std::map<std::vector<uint8_t>, MapRow> by_key;
  for (auto &e : data) {
    MapRow &row = by_key[e.key];
    row.key = e.key;
    for (auto &v : e.values) {
      row.num += load<int64_t>(v, 0);
      row.count += load<uint64_t>(v, 8);
    }
  }
  std::vector<MapRow> rows;
  for (auto &[k, row] : by_key)
    rows.push_back(std::move(row));
  sort_by(rows, [](const MapRow &r) { return r.average(); });
  return rows;
}

size_t bucket_count(const abi::MapSpec &map) {
  if (map.agg == AggKind::Lhist && map.lhist_step > 0)
    return size_t((map.lhist_max - map.lhist_min) / map.lhist_step + 2);
  return kHistBuckets;
}

std::vector<MapRow> hist_rows(const abi::MapSpec &map, const MapData &data) {
  std::map<std::vector<uint8_t>, MapRow> by_key;
  for (auto &e : data) {
    if (e.key.size() < 8)
      continue;
    size_t user = e.key.size() - 8;
    uint64_t bucket = load<uint64_t>(e.key, user);
    if (bucket >= bucket_count(map))
      continue; // not a bucket index: skip rather than print garbage
    std::vector<uint8_t> key(e.key.begin(), e.key.begin() + user);
    MapRow &row = by_key[key];
    if (row.buckets.empty()) {
      row.key = key;
      row.buckets.resize(bucket_count(map));
    }
    row.buckets[bucket] += sum_u64(e);
  }
  std::vector<MapRow> rows;
  for (auto &[k, row] : by_key)
    rows.push_back(std::move(row));
  auto total = [](const MapRow &r) {
    uint64_t t = 0;
    for (uint64_t c : r.buckets)
      t += c;
    return t;
  };
  sort_by(rows, total);
  return rows;
}

} // namespace

bool map_value_signed(const abi::MapSpec &map) {
  switch (map.agg) {
  case AggKind::Count:
    return false;
  case AggKind::Sum:
  case AggKind::None:
    return map.value.kind == ValueType::Int ||
           (map.value.kind == ValueType::Enum && map.value.enum_signed);
  default:
    return true;
  }
}

std::vector<MapRow> map_rows(const abi::MapSpec &map, const MapData &data) {
  switch (map.agg) {
  case AggKind::Hist:
  case AggKind::Lhist:
    return hist_rows(map, data);
  case AggKind::Avg:
  case AggKind::Stats:
    return stats_rows(data);
  case AggKind::Tseries: {
    std::vector<MapRow> rows;
    for (TimeSeriesRow &t : tseries_rows(map, data)) {
      rows.emplace_back();
      rows.back().key = std::move(t.key);
      rows.back().series = std::move(t.series);
    }
    return rows;
  }
  default:
    return plain_rows(map, data);
  }
}

} // namespace gpubt::runtime
