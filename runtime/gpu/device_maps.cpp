// Device map images -> MapData (see device_maps.h). Hist/lhist values hold every bucket of a key
// on the device; the host layout has one entry per (key, bucket) with a non-zero count.
#include "runtime/gpu/device_maps.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "runtime/abi/device_abi.h"

namespace gpubt::runtime {

namespace {

bool is_bucketed(const abi::MapSpec &m) {
  return m.agg == abi::AggKind::Hist || m.agg == abi::AggKind::Lhist;
}

uint32_t round8(uint32_t n) { return (n + 7) / 8 * 8; }

uint64_t u64_at(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Bytes of the host key before any bucket index: a scalar map's key is a uint64 0 (none before
// a scalar hist's bucket); a bucketed key pads the user key to 8.
uint32_t host_user_key_size(const abi::MapSpec &m) {
  if (m.key.kind == abi::ValueType::None)
    return is_bucketed(m) ? 0 : 8;
  return is_bucketed(m) ? round8(m.key.size) : m.key.size;
}

// Count..Stats keep the device words (the same layout as on the host).
uint32_t host_value_size(const abi::MapSpec &m) {
  switch (m.agg) {
  case abi::AggKind::Count:
  case abi::AggKind::Sum:
    return 8;
  case abi::AggKind::Min:
  case abi::AggKind::Max:
  case abi::AggKind::Avg:
  case abi::AggKind::Stats:
    return 16;
  default:
    return m.value.size ? m.value.size : 8;
  }
}

void add_row(DeviceMapSnapshot &into, std::vector<uint8_t> key, const uint8_t *value, size_t n) {
  auto [it, fresh] = into.rows.emplace(key, into.data.size());
  if (fresh)
    into.data.push_back({std::move(key), {}});
  into.data[it->second].values.emplace_back(value, value + n);
}

} // namespace

Status add_device_map_image(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                            const uint8_t *image, size_t size, DeviceMapSnapshot &into) {
  const auto &L = layout;
  auto fail = [&](const std::string &why) {
    return make_error("device map " + map.name + ": " + why);
  };
  if (size < sizeof(gpubt_device_map_header) || size < L.storage_size())
    return fail("image of " + std::to_string(size) + " bytes, expected " +
                std::to_string(L.storage_size()));
  gpubt_device_map_header h;
  std::memcpy(&h, image, sizeof h);
  if (h.capacity != L.capacity || h.key_size != L.key_size || h.value_size != L.value_size ||
      h.entry_size != L.entry_size || L.entry_size != 8 + L.key_size + L.value_size)
    return fail("header does not match its layout");
  bool bucketed = is_bucketed(map);
  uint32_t user_key = host_user_key_size(map);
  uint32_t value_size = host_value_size(map);
  if ((L.key_size && user_key > L.key_size) || (!bucketed && value_size > L.value_size) ||
      (bucketed && 8ull * L.buckets > L.value_size))
    return fail("the host layout does not fit the device slot");

  into.drops += h.drops;
  for (uint32_t i = 0; i < L.capacity; ++i) {
    const uint8_t *e = image + sizeof h + uint64_t(i) * L.entry_size;
    if (u64_at(e) != GPUBT_SLOT_READY)
      continue;
    std::vector<uint8_t> key(user_key, 0);
    if (L.key_size)
      std::memcpy(key.data(), e + 8, user_key);
    const uint8_t *value = e + 8 + L.key_size;
    if (L.prefilled && std::all_of(value, value + L.value_size, [](uint8_t b) { return !b; }))
      continue; // never updated
    if (!bucketed) {
      add_row(into, std::move(key), value, value_size);
      continue;
    }
    for (uint64_t b = 0; b < L.buckets; ++b) {
      if (!u64_at(value + 8 * b))
        continue;
      std::vector<uint8_t> k = key;
      k.resize(user_key + 8);
      std::memcpy(k.data() + user_key, &b, 8);
      add_row(into, std::move(k), value + 8 * b, 8);
    }
  }
  return Ok{};
}

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
