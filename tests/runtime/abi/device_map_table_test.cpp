// The device map table's host library (runtime/abi/device_map_table.h): a table laid out, keys
// placed where the probes' search finds them, read back slot by slot; and the part of a header a
// rewrite of a live table may skip.
#include "runtime/abi/device_map_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

using namespace gpubt::abi;

namespace {

DeviceMapSpec keyed_spec(uint32_t capacity) {
  DeviceMapSpec d;
  d.map_index = 0;
  d.capacity = capacity;
  d.key_size = 8;
  d.value_size = 8;
  d.entry_size = 8 + d.key_size + d.value_size;
  return d;
}

std::map<uint64_t, uint64_t> ready_rows(const DeviceMapSpec &d, const std::vector<uint8_t> &image) {
  std::map<uint64_t, uint64_t> rows;
  for_each_ready_slot(d, image.data(), [&](const uint8_t *key, const uint8_t *value) {
    uint64_t k, v;
    std::memcpy(&k, key, 8);
    std::memcpy(&v, value, 8);
    rows[k] = v;
  });
  return rows;
}

} // namespace

TEST(DeviceMapTable, PlacedKeysReadBackAndAFullTableCountsDrops) {
  auto d = keyed_spec(4);
  std::vector<uint8_t> image(d.storage_size(), 0);
  init_device_map_table(d, image.data());
  EXPECT_EQ(device_map_table_error(d, image.data(), image.size()), "");
  DeviceMapPlacer placer(d, image.data(), 8, 8);
  std::pair<uint64_t, uint64_t> rows[] = {{1, 10}, {2, 20}, {3, 30}, {1, 11}, {4, 40}, {5, 50}};
  for (auto [k, v] : rows)
    placer.place(reinterpret_cast<const uint8_t *>(&k), reinterpret_cast<const uint8_t *>(&v));
  EXPECT_EQ(placer.drops(), 1u); // 5: four slots, four keys
  EXPECT_EQ(placer.entries(), 5u);
  EXPECT_EQ(ready_rows(d, image),
            (std::map<uint64_t, uint64_t>{{1, 11}, {2, 20}, {3, 30}, {4, 40}}));
}

// The CUDA agent rewrites a from_host table before launches starting at kDeviceMapFixedBytes:
// what it skips is exactly what does not depend on the table's state (capacity and sizes), and
// the drops count it writes lands in the header.
TEST(DeviceMapTable, ARewritePastTheFixedBytesKeepsTheHeaderValid) {
  auto d = keyed_spec(8);
  std::vector<uint8_t> live(d.storage_size(), 0), fresh(d.storage_size(), 0);
  init_device_map_table(d, live.data(), 0);
  init_device_map_table(d, fresh.data(), 7);
  EXPECT_EQ(std::memcmp(live.data(), fresh.data(), kDeviceMapFixedBytes), 0);
  EXPECT_NE(std::memcmp(live.data(), fresh.data(), sizeof(gpubt_device_map_header)), 0);
  uint64_t k = 3, v = 33;
  DeviceMapPlacer(d, fresh.data(), 8, 8)
      .place(reinterpret_cast<const uint8_t *>(&k), reinterpret_cast<const uint8_t *>(&v));
  std::memcpy(live.data() + kDeviceMapFixedBytes, fresh.data() + kDeviceMapFixedBytes,
              fresh.size() - kDeviceMapFixedBytes);
  EXPECT_EQ(device_map_table_error(d, live.data(), live.size()), "");
  gpubt_device_map_header h;
  std::memcpy(&h, live.data(), sizeof h);
  EXPECT_EQ(h.drops, 7u);
  EXPECT_EQ(ready_rows(d, live), (std::map<uint64_t, uint64_t>{{3, 33}}));
}
