// Builders for hand-made map snapshots and specs in the output tests: little-endian bytes laid
// out as program_spec.h describes, so each test reads like the bpftrace script it mirrors.
#pragma once
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime::fx {

using Bytes = std::vector<uint8_t>;
using abi::AggKind;
using abi::ValueType;

template <class T> Bytes le(T v) {
  Bytes b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}
inline Bytes i64(int64_t v) { return le(v); }
inline Bytes u64(uint64_t v) { return le(v); }
inline Bytes str(const std::string &s, size_t n = 64) {
  Bytes b(n, 0);
  std::memcpy(b.data(), s.data(), std::min(n, s.size()));
  return b;
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (auto &p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline ValueType int_t(uint32_t size = 8) { return {ValueType::Int, size}; }
inline ValueType uint_t(uint32_t size = 8) { return {ValueType::UInt, size}; }
inline ValueType str_t(uint32_t size = 64) { return {ValueType::String, size}; }
inline ValueType tuple_t(std::vector<ValueType> elems) { // packed, as the builders lay bytes
  ValueType t{ValueType::Tuple, 0};
  for (auto &e : elems) {
    t.offsets.push_back(t.size);
    t.size += e.size;
  }
  t.elems = std::move(elems);
  return t;
}

inline abi::MapSpec map_spec(std::string name, AggKind agg, ValueType key,
                             ValueType value = int_t()) {
  abi::MapSpec m;
  m.name = std::move(name);
  m.agg = agg;
  m.key = std::move(key);
  m.value = std::move(value);
  return m;
}
inline abi::MapSpec lhist_spec(std::string name, ValueType key, int64_t min, int64_t max,
                               int64_t step) {
  abi::MapSpec m = map_spec(std::move(name), AggKind::Lhist, std::move(key), uint_t());
  m.lhist_min = min;
  m.lhist_max = max;
  m.lhist_step = step;
  return m;
}

// One entry; several values make it a per-CPU entry.
inline MapEntry entry(Bytes key, std::vector<Bytes> per_cpu) {
  return {std::move(key), std::move(per_cpu)};
}
inline Bytes scalar_key() { return u64(0); }
inline Bytes minmax(int64_t v, bool set = true) { return cat({i64(v), u64(set)}); }
inline Bytes avg_val(int64_t sum, uint64_t count) { return cat({i64(sum), u64(count)}); }
inline MapEntry bucket(const Bytes &user_key, uint64_t index, uint64_t count) {
  return entry(cat({user_key, u64(index)}), {u64(count)});
}

// bpftrace's log2 bucket index of a value (program_spec.h's layout).
inline uint64_t hist_index(int64_t v) {
  if (v < 0)
    return 0;
  if (v == 0)
    return 1;
  uint64_t i = 2;
  while (v >>= 1)
    i++;
  return i;
}
inline uint64_t lhist_index(int64_t v, int64_t min, int64_t max, int64_t step) {
  if (v < min)
    return 0;
  if (v >= max)
    return 1 + uint64_t((max - min) / step);
  return 1 + uint64_t((v - min) / step);
}

// The entries of a hist / lhist map after recording `values` under `user_key`.
inline MapData hist_of(const Bytes &user_key, std::initializer_list<int64_t> values) {
  std::vector<uint64_t> counts(66);
  for (int64_t v : values)
    counts[hist_index(v)]++;
  MapData out;
  for (size_t i = 0; i < counts.size(); i++)
    if (counts[i])
      out.push_back(bucket(user_key, i, counts[i]));
  return out;
}
inline MapData lhist_of(const Bytes &user_key, std::initializer_list<int64_t> values, int64_t min,
                        int64_t max, int64_t step) {
  std::vector<uint64_t> counts(2 + (max - min) / step);
  for (int64_t v : values)
    counts[lhist_index(v, min, max, step)]++;
  MapData out;
  for (size_t i = 0; i < counts.size(); i++)
    if (counts[i])
      out.push_back(bucket(user_key, i, counts[i]));
  return out;
}
inline MapData join(std::initializer_list<MapData> parts) {
  MapData out;
  for (auto &p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A program's maps with a snapshot of each, as print_all_maps() takes them.
struct MapCase {
  abi::ProgramSpec spec;
  std::vector<MapData> data;
  void add(abi::MapSpec m, MapData d) {
    spec.maps.push_back(std::move(m));
    data.push_back(std::move(d));
  }
};

} // namespace gpubt::runtime::fx
