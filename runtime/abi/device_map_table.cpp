// Device map tables on the host (device_map_table.h).
#include "runtime/abi/device_map_table.h"

#include <algorithm>

namespace gpubt::abi {

namespace {

bool is_bucketed(const MapSpec &m) { return m.agg == AggKind::Hist || m.agg == AggKind::Lhist; }

uint64_t u64_at(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void add_row(DeviceMapSnapshot &into, std::vector<uint8_t> key, const uint8_t *value, size_t n) {
  auto [it, fresh] = into.rows.emplace(key, into.data.size());
  if (fresh)
    into.data.push_back({std::move(key), {}});
  into.data[it->second].values.emplace_back(value, value + n);
}

} // namespace

void init_device_map_table(const DeviceMapSpec &d, uint8_t *image, uint64_t drops) {
  gpubt_device_map_header h{d.capacity, d.key_size, d.value_size, d.entry_size, drops, 0};
  std::memcpy(image, &h, sizeof h);
  if (!d.prefilled)
    return;
  uint64_t ready = GPUBT_SLOT_READY;
  for (uint64_t i = 0; i < d.capacity; ++i)
    std::memcpy(image + sizeof h + i * d.entry_size, &ready, 8);
}

std::string device_map_table_error(const DeviceMapSpec &d, const uint8_t *image, size_t size) {
  if (image == nullptr || size < sizeof(gpubt_device_map_header) || size < d.storage_size())
    return "image of " + std::to_string(size) + " bytes, expected " +
           std::to_string(d.storage_size());
  gpubt_device_map_header h;
  std::memcpy(&h, image, sizeof h);
  if (h.capacity != d.capacity || h.key_size != d.key_size || h.value_size != d.value_size ||
      h.entry_size != d.entry_size || d.entry_size != 8 + d.key_size + d.value_size)
    return "header " + std::to_string(h.capacity) + "x(" + std::to_string(h.key_size) + "+" +
           std::to_string(h.value_size) + "), expected " + std::to_string(d.capacity) + "x(" +
           std::to_string(d.key_size) + "+" + std::to_string(d.value_size) + ")";
  return "";
}

DeviceMapPlacer::DeviceMapPlacer(const DeviceMapSpec &d, uint8_t *image, uint32_t key_size,
                                 uint32_t value_size)
    : d_(d), base_(image + sizeof(gpubt_device_map_header)), key_size_(key_size),
      value_size_(value_size) {}

void DeviceMapPlacer::place(const uint8_t *key, const uint8_t *value) {
  uint32_t mask = d_.capacity - 1;
  bool keyed = d_.key_size != 0;
  if (keyed && used_ == d_.capacity) {
    ++drops_;
    return;
  }
  uint64_t start = keyed ? hash(key) : 0;
  for (uint32_t i = 0; i < d_.capacity; ++i) {
    uint8_t *entry = base_ + uint64_t((start + i) & mask) * d_.entry_size;
    uint64_t state;
    std::memcpy(&state, entry, 8);
    if (state == GPUBT_SLOT_EMPTY) {
      state = GPUBT_SLOT_READY;
      std::memcpy(entry, &state, 8);
      if (keyed)
        std::memcpy(entry + 8, key, key_size_);
      std::memcpy(entry + 8 + d_.key_size, value, value_size_);
      ++used_;
      return;
    }
    if (!keyed || std::memcmp(entry + 8, key, key_size_) == 0) { // seen again
      std::memcpy(entry + 8 + d_.key_size, value, value_size_);
      return;
    }
  }
  ++drops_;
}

uint64_t DeviceMapPlacer::hash(const uint8_t *key) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint32_t off = 0; off < d_.key_size; off += 8) {
    uint64_t w = 0;
    if (off < key_size_)
      std::memcpy(&w, key + off, std::min<uint32_t>(8, key_size_ - off));
    h = gpubt_fmix64(h * 31u + w);
  }
  return h;
}

Status add_device_map_image(const MapSpec &map, const DeviceMapSpec &d, const uint8_t *image,
                            size_t size, DeviceMapSnapshot &into) {
  auto fail = [&](const std::string &why) {
    return make_error("device map " + map.name + ": " + why);
  };
  if (std::string why = device_map_table_error(d, image, size); !why.empty())
    return fail(why.starts_with("header") ? "header does not match its layout" : why);
  bool bucketed = is_bucketed(map);
  // The host key: a bucketed map's ends in the bucket index (a u64); a scalar map's is a u64 0.
  uint32_t user_key = bucketed ? map.key_size - 8 : map.key_size;
  if (map.key_size < (bucketed ? 8u : 0u) || (d.key_size && user_key > d.key_size) ||
      (!bucketed && map.value_size > d.value_size) || (bucketed && 8ull * d.buckets > d.value_size))
    return fail("the host layout does not fit the device slot");
  gpubt_device_map_header h;
  std::memcpy(&h, image, sizeof h);
  into.drops += h.drops;
  for_each_ready_slot(d, image, [&](const uint8_t *slot_key, const uint8_t *value) {
    std::vector<uint8_t> key(user_key, 0);
    if (d.key_size)
      std::memcpy(key.data(), slot_key, user_key);
    if (d.prefilled && std::all_of(value, value + d.value_size, [](uint8_t b) { return !b; }))
      return; // never updated
    if (!bucketed)
      return add_row(into, std::move(key), value, map.value_size);
    for (uint64_t b = 0; b < d.buckets; ++b) {
      if (!u64_at(value + 8 * b))
        continue;
      std::vector<uint8_t> k = key;
      k.resize(user_key + 8);
      std::memcpy(k.data() + user_key, &b, 8);
      add_row(into, std::move(k), value + 8 * b, 8);
    }
  });
  return Ok{};
}

} // namespace gpubt::abi
