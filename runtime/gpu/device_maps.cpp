// Device map images -> MapData (see device_maps.h); the table's format is runtime/abi's
// (device_map_table.h).
#include "runtime/gpu/device_maps.h"

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

std::string device_map_drops_message(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                     uint64_t drops) {
  if (!drops)
    return "";
  return "Lost " + std::to_string(drops) + " updates to " + map.name +
         " on the GPU: the map is full (" + std::to_string(layout.capacity) + " entries)";
}

} // namespace gpubt::runtime
