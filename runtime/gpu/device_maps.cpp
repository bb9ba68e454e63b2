// Device map images -> MapData (see device_maps.h); the table's format is runtime/abi's
// (device_map_table.h).
#include "runtime/gpu/device_maps.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>

namespace gpubt::runtime {

Result<DeviceMapSnapshot> read_device_map(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                          const uint8_t *image, size_t size) {
  DeviceMapSnapshot out;
  if (auto st = add_device_map_image(map, layout, image, size, out); !st)
    return make_error(st.error());
  return out;
}

void merge_device_maps(const abi::ProgramSpec &spec, std::vector<MapData> &device,
                       std::vector<MapData> &maps) {
  for (const auto &layout : spec.device.maps) {
    size_t i = layout.map_index;
    if (layout.from_host || layout.to_host || layout.map_index < 0 || i >= maps.size() ||
        i >= device.size())
      continue;
    MapData &into = maps[i];
    std::map<std::vector<uint8_t>, size_t> rows;
    for (size_t r = 0; r < into.size(); ++r)
      rows.emplace(into[r].key, r);
    for (auto &e : device[i]) {
      auto it = rows.find(e.key);
      if (it == rows.end()) {
        rows.emplace(e.key, into.size());
        into.push_back(std::move(e));
        continue;
      }
      auto &values = into[it->second].values;
      values.insert(values.end(), std::make_move_iterator(e.values.begin()),
                    std::make_move_iterator(e.values.end()));
    }
    device[i].clear();
  }
}

namespace {

// Every value of E summed word by word (64-bit, wrapping: signed sums subtract alike).
std::vector<uint64_t> word_sums(const MapEntry &e) {
  std::vector<uint64_t> sums;
  for (const auto &v : e.values) {
    sums.resize(std::max(sums.size(), v.size() / 8));
    for (size_t w = 0; w < v.size() / 8; ++w) {
      uint64_t x;
      std::memcpy(&x, v.data() + 8 * w, 8);
      sums[w] += x;
    }
  }
  return sums;
}

std::vector<uint8_t> words_value(const std::vector<uint64_t> &words) {
  std::vector<uint8_t> value(words.size() * 8);
  std::memcpy(value.data(), words.data(), value.size());
  return value;
}

// A min's or max's values: struct { int64 value; uint64 is_set; } each (program_spec.h).
std::vector<uint8_t> fold_min_max(const MapEntry &e, bool is_min, bool is_signed) {
  abi::MinMaxValue best{0, 0};
  for (const auto &v : e.values) {
    abi::MinMaxValue x{};
    if (v.size() < sizeof x)
      continue;
    std::memcpy(&x, v.data(), sizeof x);
    if (!x.is_set)
      continue;
    bool less = is_signed ? x.value < best.value : uint64_t(x.value) < uint64_t(best.value);
    bool more = is_signed ? x.value > best.value : uint64_t(x.value) > uint64_t(best.value);
    if (!best.is_set || (is_min ? less : more))
      best = {x.value, 1};
  }
  std::vector<uint8_t> value(sizeof best);
  std::memcpy(value.data(), &best, sizeof best);
  return value;
}

} // namespace

void fold_device_rows(const abi::MapSpec &map, MapData &rows) {
  bool min_max = map.agg == abi::AggKind::Min || map.agg == abi::AggKind::Max;
  for (auto &e : rows) {
    if (e.values.size() == 1)
      continue;
    std::vector<uint8_t> one = min_max ? fold_min_max(e, map.agg == abi::AggKind::Min,
                                                      map.value.kind == abi::ValueType::Int)
                                       : words_value(word_sums(e));
    e.values.assign(1, std::move(one));
  }
}

void subtract_device_rows(const MapData &base, bool keep_zero, MapData &rows) {
  std::map<std::vector<uint8_t>, std::vector<uint64_t>> before;
  for (const auto &e : base)
    before.emplace(e.key, word_sums(e));
  MapData out;
  for (auto &e : rows) {
    std::vector<uint64_t> now = word_sums(e);
    if (auto it = before.find(e.key); it != before.end())
      for (size_t w = 0; w < now.size() && w < it->second.size(); ++w)
        now[w] -= it->second[w];
    bool nothing_new = std::all_of(now.begin(), now.end(), [](uint64_t w) { return w == 0; });
    if (nothing_new && !keep_zero)
      continue;
    out.push_back({std::move(e.key), {words_value(now)}});
  }
  rows = std::move(out);
}

std::string device_map_drops_message(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                     uint64_t drops) {
  if (!drops)
    return "";
  return "Lost " + std::to_string(drops) + " updates to " + map.name +
         " on the GPU: the map is full (" + std::to_string(layout.capacity) + " entries)";
}

} // namespace gpubt::runtime
