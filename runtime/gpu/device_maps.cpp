// Device map images -> MapData (see device_maps.h); the table's format is runtime/abi's
// (device_map_table.h).
#include "runtime/gpu/device_maps.h"

#include <map>

#include <cstring>

#include <algorithm>

#include <iterator>

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

} // namespace

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
    std::vector<uint8_t> value(now.size() * 8);
    std::memcpy(value.data(), now.data(), value.size());
    out.push_back({std::move(e.key), {std::move(value)}});
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
