// Device map images built by hand as the GPU lays them out (runtime/abi/device_abi.h) read back
// into MapData, and printed exactly as the same host map prints.
#include "runtime/gpu/device_maps.h"

#include <gtest/gtest.h>
#include <sstream>

#include "tests/support/output_fixtures.h"
#include "runtime/abi/device_abi.h"
#include "runtime/output/print_map.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

// The host map's key and value sizes as the compiler lays them out (codegen/layout/map_layout.cpp),
// which the device map reader takes from the spec.
abi::MapSpec with_host_sizes(abi::MapSpec m) {
  bool bucketed = m.agg == AggKind::Hist || m.agg == AggKind::Lhist;
  uint32_t user = m.key.kind == abi::ValueType::None ? (bucketed ? 0 : 8) : m.key.size;
  m.key_size = bucketed ? (user + 7) / 8 * 8 + 8 : user;
  bool pair = m.agg == AggKind::Min || m.agg == AggKind::Max || m.agg == AggKind::Avg ||
              m.agg == AggKind::Stats;
  m.value_size = pair ? 16 : m.agg != AggKind::None ? 8 : m.value.size ? m.value.size : 8;
  return m;
}
abi::MapSpec sized_spec(std::string name, AggKind agg, abi::ValueType key,
                        abi::ValueType value = int_t()) {
  return with_host_sizes(map_spec(std::move(name), agg, std::move(key), std::move(value)));
}
abi::MapSpec sized_lhist(std::string name, abi::ValueType key, int64_t min, int64_t max,
                         int64_t step) {
  return with_host_sizes(lhist_spec(std::move(name), std::move(key), min, max, step));
}

abi::DeviceMapSpec layout(uint32_t capacity, uint32_t key_size, uint32_t value_size,
                          uint32_t buckets = 0) {
  abi::DeviceMapSpec l;
  l.capacity = capacity;
  l.key_size = key_size;
  l.value_size = value_size;
  l.entry_size = 8 + key_size + value_size;
  l.buckets = buckets;
  return l;
}

// A zeroed storage with its header; put() fills a slot as a claiming thread would.
struct Image {
  explicit Image(const abi::DeviceMapSpec &l, uint64_t drops = 0) : l(l), bytes(l.storage_size()) {
    gpubt_device_map_header h{l.capacity, l.key_size, l.value_size, l.entry_size, drops, 0};
    std::memcpy(bytes.data(), &h, sizeof h);
  }
  void put(uint32_t slot, const Bytes &key, const Bytes &value, uint64_t state = GPUBT_SLOT_READY) {
    uint8_t *e = bytes.data() + sizeof(gpubt_device_map_header) + uint64_t(slot) * l.entry_size;
    std::memcpy(e, &state, 8);
    std::memcpy(e + 8, key.data(), std::min<size_t>(key.size(), l.key_size));
    std::memcpy(e + 8 + l.key_size, value.data(), std::min<size_t>(value.size(), l.value_size));
  }
  abi::DeviceMapSpec l;
  Bytes bytes;
};

Bytes buckets(uint32_t n, std::initializer_list<std::pair<uint32_t, uint64_t>> counts) {
  Bytes b(8 * n, 0);
  for (auto [i, c] : counts)
    std::memcpy(b.data() + 8 * i, &c, 8);
  return b;
}

std::string printed(const abi::MapSpec &m, const MapData &data) {
  abi::ProgramSpec spec;
  spec.maps.push_back(m);
  std::ostringstream out;
  print_map(*make_output(OutputFormat::Text, out), spec, 0, data, nullptr);
  return out.str();
}

MapData read(const abi::MapSpec &m, const Image &img) {
  auto snap = read_device_map(m, img.l, img.bytes.data(), img.bytes.size());
  EXPECT_TRUE(snap.ok()) << (snap.ok() ? "" : snap.error());
  return snap.ok() ? snap->data : MapData{};
}

// gpu:kretprobe:vectorAdd { @ = count(); }
TEST(DeviceMaps, ScalarCount) {
  auto m = sized_spec("@", AggKind::Count, {}, uint_t());
  Image img(layout(1, 0, 8));
  img.put(0, {}, u64(4096));
  MapData data = read(m, img);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].key, scalar_key());
  EXPECT_EQ(printed(m, data), "@: 4096\n");
  EXPECT_EQ(printed(m, data), printed(m, {entry(scalar_key(), {u64(4096)})}));
}

// A striped scalar aggregation (an entry per SM, codegen/device/lower_device.cpp): the entries
// of SMs that ran the probe merge into the one value; a hist's buckets add up per bucket.
TEST(DeviceMaps, StripedScalarsMergeAcrossSms) {
  auto m = sized_spec("@", AggKind::Count, {}, uint_t());
  Image img(layout(2048, 0, 8));
  img.put(0, {}, u64(4000));
  img.put(8 * 131, {}, u64(96));
  img.put(8 * 7, {}, u64(5), GPUBT_SLOT_BUSY);
  EXPECT_EQ(printed(m, read(m, img)), "@: 4096\n");

  auto h = sized_spec("@h", AggKind::Hist, {}, uint_t());
  Image hist(layout(256, 0, 8 * GPUBT_HIST_BUCKETS, GPUBT_HIST_BUCKETS));
  hist.put(3, {}, buckets(GPUBT_HIST_BUCKETS, {{1, 2}, {5, 7}}));
  hist.put(200, {}, buckets(GPUBT_HIST_BUCKETS, {{5, 3}}));
  EXPECT_EQ(printed(h, read(h, hist)),
            printed(h, {bucket({}, 1, 2), entry(bucket({}, 5, 0).key, {u64(7), u64(3)})}));
}

// A prefilled map's entries are all READY: those still zero were never updated.
TEST(DeviceMaps, PrefilledEntriesStillZeroAreNotValues) {
  auto m = sized_spec("@", AggKind::Count, {}, uint_t());
  auto l = layout(16, 0, 8);
  l.prefilled = true;
  Image img(l);
  for (uint32_t i = 0; i < 16; ++i)
    img.put(i, {}, u64(i == 3 ? 40 : i == 9 ? 2 : 0));
  EXPECT_EQ(printed(m, read(m, img)), "@: 42\n");
  Image untouched(l);
  for (uint32_t i = 0; i < 16; ++i)
    untouched.put(i, {}, u64(0));
  EXPECT_TRUE(read(m, untouched).empty());
}

// gpu:kretprobe:vectorAdd < @[tid] = count(); >: only READY slots are entries.
TEST(DeviceMaps, KeyedCountSkipsEmptyAndBusySlots) {
  auto m = sized_spec("@", AggKind::Count, uint_t(), uint_t());
  Image img(layout(8, 8, 8));
  img.put(1, u64(7), u64(1));
  img.put(3, u64(2), u64(3));
  img.put(4, u64(9), u64(5), GPUBT_SLOT_BUSY);
  img.put(6, u64(0), u64(2));
  MapData data = read(m, img);
  EXPECT_EQ(data.size(), 3u);
  EXPECT_EQ(printed(m, data), "@[7]: 1\n@[0]: 2\n@[2]: 3\n");
  EXPECT_EQ(printed(m, data), printed(m, {entry(u64(7), {u64(1)}), entry(u64(2), {u64(3)}),
                                          entry(u64(0), {u64(2)})}));
}

// @h[bid_x] = hist(clock): every bucket of a key in one device value.
TEST(DeviceMaps, HistBucketsBecomeHostEntries) {
  auto m = sized_spec("@h", AggKind::Hist, uint_t(), uint_t());
  Image img(layout(4, 8, 8 * GPUBT_HIST_BUCKETS, GPUBT_HIST_BUCKETS));
  img.put(2, u64(1), buckets(GPUBT_HIST_BUCKETS, {{1, 2}, {5, 7}, {12, 1}}));
  MapData data = read(m, img);
  ASSERT_EQ(data.size(), 3u);
  MapData host = {bucket(u64(1), 1, 2), bucket(u64(1), 5, 7), bucket(u64(1), 12, 1)};
  EXPECT_EQ(data[1].key, host[1].key);
  EXPECT_EQ(printed(m, data), printed(m, host));
  EXPECT_NE(printed(m, data).find("@h[1]:"), std::string::npos);
}

// @l = lhist(lane, 0, 32, 4): a scalar lhist's host key is the bucket alone.
TEST(DeviceMaps, ScalarLhist) {
  auto m = sized_lhist("@l", {}, 0, 32, 4);
  Image img(layout(1, 0, 8 * 10, 10));
  img.put(0, {}, buckets(10, {{1, 4}, {2, 4}, {9, 1}}));
  MapData data = read(m, img);
  ASSERT_EQ(data.size(), 3u);
  EXPECT_EQ(data[0].key, u64(1));
  EXPECT_EQ(printed(m, data), printed(m, {entry(u64(1), {u64(4)}), entry(u64(2), {u64(4)}),
                                          entry(u64(9), {u64(1)})}));
}

TEST(DeviceMaps, MinMaxAvgStatsKeepTheHostWords) {
  for (auto agg : {AggKind::Min, AggKind::Max, AggKind::Avg, AggKind::Stats}) {
    auto m = sized_spec("@m", agg, uint_t(), int_t());
    Image img(layout(4, 8, 16));
    Bytes v = agg == AggKind::Min || agg == AggKind::Max ? minmax(-5) : avg_val(30, 4);
    img.put(0, u64(3), v);
    MapData data = read(m, img);
    ASSERT_EQ(data.size(), 1u);
    EXPECT_EQ(data[0].values.front(), v);
    EXPECT_EQ(printed(m, data), printed(m, {entry(u64(3), {v})}));
  }
}

// @[bid_x, kernel] = count(): a tuple key as the host lays it out, zero-padded to 8.
TEST(DeviceMaps, TupleKeys) {
  ValueType key = tuple_t({uint_t(), str_t(16)});
  auto m = sized_spec("@", AggKind::Count, key, uint_t());
  Image img(layout(4, 24, 8));
  Bytes k = cat({u64(2), str("vectorAdd", 16)});
  img.put(3, k, u64(64));
  MapData data = read(m, img);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].key, k);
  EXPECT_EQ(printed(m, data), "@[2, vectorAdd]: 64\n");
}

TEST(DeviceMaps, PlainValues) {
  auto m = sized_spec("@s", AggKind::None, uint_t(), str_t(16));
  Image img(layout(2, 8, 16));
  img.put(0, u64(1), str("hello", 16));
  MapData data = read(m, img);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(printed(m, data), "@s[1]: hello\n");
}

// Two CUDA contexts' images: a key in both becomes one entry with two values, merged as CPUs.
TEST(DeviceMaps, ImagesMergeLikeCpus) {
  auto m = sized_spec("@", AggKind::Count, uint_t(), uint_t());
  Image a(layout(4, 8, 8), 2), b(layout(4, 8, 8), 3);
  a.put(0, u64(1), u64(10));
  a.put(1, u64(2), u64(1));
  b.put(3, u64(1), u64(5));
  DeviceMapSnapshot snap;
  ASSERT_TRUE(add_device_map_image(m, a.l, a.bytes.data(), a.bytes.size(), snap).ok());
  ASSERT_TRUE(add_device_map_image(m, b.l, b.bytes.data(), b.bytes.size(), snap).ok());
  ASSERT_EQ(snap.data.size(), 2u);
  EXPECT_EQ(snap.data[0].values.size(), 2u);
  EXPECT_EQ(snap.drops, 5u);
  EXPECT_EQ(printed(m, snap.data), "@[2]: 1\n@[1]: 15\n");
}

using Rows = std::vector<std::pair<Bytes, std::vector<Bytes>>>;
Rows rows_of(const MapData &data) {
  Rows out;
  for (const auto &e : data)
    out.emplace_back(e.key, e.values);
  return out;
}

// The copy host probes read (Tracer::mirror_device_maps): each key's values from several
// processes or SMs folded into one, which prints as the unfolded rows print.
TEST(DeviceMaps, FoldedRowsHoldOneValueEach) {
  auto count = sized_spec("@", AggKind::Count, uint_t(), uint_t());
  MapData rows = {entry(u64(1), {u64(10), u64(5), u64(0)}), entry(u64(2), {u64(7)})};
  std::string before = printed(count, rows);
  fold_device_rows(count, rows);
  EXPECT_EQ(rows_of(rows), rows_of(MapData{entry(u64(1), {u64(15)}), entry(u64(2), {u64(7)})}));
  EXPECT_EQ(printed(count, rows), before);

  auto avg = sized_spec("@a", AggKind::Avg, uint_t(), int_t());
  MapData a = {entry(u64(1), {avg_val(-30, 4), avg_val(10, 1)})};
  fold_device_rows(avg, a);
  EXPECT_EQ(rows_of(a), rows_of(MapData{entry(u64(1), {avg_val(-20, 5)})}));

  auto hist = sized_spec("@h", AggKind::Hist, abi::ValueType{}, uint_t());
  MapData h = {bucket({}, 3, 2), entry(u64(4), {u64(1), u64(6)})};
  fold_device_rows(hist, h);
  EXPECT_EQ(rows_of(h), rows_of(MapData{bucket({}, 3, 2), entry(u64(4), {u64(7)})}));

  // A min or max: the extreme of the values that are set; none set stays unset.
  auto min = sized_spec("@lo", AggKind::Min, uint_t(), int_t());
  MapData lo = {entry(u64(1), {minmax(0, false), minmax(9), minmax(-4), minmax(-100, false)}),
                entry(u64(2), {minmax(0, false), minmax(0, false)})};
  fold_device_rows(min, lo);
  EXPECT_EQ(rows_of(lo),
            rows_of(MapData{entry(u64(1), {minmax(-4)}), entry(u64(2), {minmax(0, false)})}));
  auto umax = sized_spec("@hi", AggKind::Max, uint_t(), uint_t());
  MapData hi = {entry(u64(1), {minmax(5), minmax(-1)})}; // -1: 2^64 - 1 unsigned
  fold_device_rows(umax, hi);
  EXPECT_EQ(rows_of(hi), rows_of(MapData{entry(u64(1), {minmax(-1)})}));
}

TEST(DeviceMaps, DropsAreReported) {
  auto m = sized_spec("@", AggKind::Count, uint_t(), uint_t());
  auto l = layout(4, 8, 8);
  EXPECT_EQ(device_map_drops_message(m, l, 0), "");
  EXPECT_EQ(device_map_drops_message(m, l, 12),
            "Lost 12 updates to @ on the GPU: the map is full (4 entries)");
}

TEST(DeviceMaps, BadImagesAreErrors) {
  auto m = sized_spec("@", AggKind::Count, uint_t(), uint_t());
  Image img(layout(4, 8, 8));
  auto short_read = read_device_map(m, img.l, img.bytes.data(), img.bytes.size() - 1);
  ASSERT_FALSE(short_read.ok());
  EXPECT_EQ(short_read.error(), "device map @: image of 127 bytes, expected 128");
  auto other = layout(8, 8, 8);
  other.capacity = 2; // header says 4
  auto mismatch = read_device_map(m, other, img.bytes.data(), img.bytes.size());
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error(), "device map @: header does not match its layout");
  auto narrow = read_device_map(sized_spec("@", AggKind::Count, str_t(16), uint_t()), img.l,
                                img.bytes.data(), img.bytes.size());
  EXPECT_FALSE(narrow.ok());
}

// A map host and gpu probes share: each device map's rows join the host map's as more per-CPU
// values (@[1] = count() 3 times on two CPUs and 5 times on the GPU prints @[1]: 8); a key of one
// side alone prints as it is; a from_host map prints the host's rows only (the device table is
// their copy), and so does a to_host map (the agent copied the device table into them); a map only gpu probes use prints the device's rows (its host map is empty).
TEST(DeviceMaps, SharedMapsMergeWithTheHostMaps) {
  abi::ProgramSpec spec;
  spec.maps = {sized_spec("@", AggKind::Count, uint_t(), uint_t()),
               sized_spec("@s", AggKind::None, uint_t(), uint_t()),
               sized_spec("@m", AggKind::Min, {}, int_t()),
               sized_spec("@a", AggKind::Avg, {}, int_t()), sized_spec("@g", AggKind::Sum, {}, int_t()),
               sized_spec("@host", AggKind::Count, {}, uint_t()),
               sized_spec("@to", AggKind::None, uint_t(), uint_t())};
  for (int i : {0, 1, 2, 3, 4, 6}) {
    auto l = layout(4, 8, 16);
    l.map_index = i;
    l.from_host = i == 1;
    l.to_host = i == 6;
    spec.device.maps.push_back(l);
  }
  std::vector<MapData> device = {{entry(u64(1), {u64(5)}), entry(u64(9), {u64(4)})},
                                 {entry(u64(1), {u64(77)})},
                                 {entry(scalar_key(), {minmax(-9)})},
                                 {entry(scalar_key(), {avg_val(10, 1)})},
                                 {entry(scalar_key(), {i64(12)})},
                                 {},
                                 {entry(u64(3), {u64(30)})}};
  std::vector<MapData> maps = {{entry(u64(1), {u64(1), u64(2)}), entry(u64(2), {u64(0), u64(6)})},
                               {entry(u64(1), {u64(10)})},
                               {entry(scalar_key(), {minmax(-5), minmax(0, false)})},
                               {entry(scalar_key(), {avg_val(30, 3), avg_val(0, 0)})},
                               {},
                               {entry(scalar_key(), {u64(3)})},
                               {entry(u64(3), {u64(31)})}};
  merge_device_maps(spec, device, maps);
  auto print = [&](size_t i) {
    std::ostringstream out;
    print_map(*make_output(OutputFormat::Text, out), spec, i, maps[i], nullptr);
    return out.str();
  };
  EXPECT_EQ(print(0), "@[9]: 4\n@[2]: 6\n@[1]: 8\n");
  EXPECT_EQ(maps[0][0].values.size(), 3u);
  EXPECT_EQ(print(1), "@s[1]: 10\n");
  EXPECT_EQ(print(2), "@m: -9\n");
  EXPECT_EQ(print(3), "@a: 10\n\n"); // (30 + 10) / (3 + 1), as bpftrace prints an avg
  EXPECT_EQ(print(4), "@g: 12\n");
  EXPECT_EQ(print(5), "@host: 3\n");
  EXPECT_EQ(print(6), "@to[3]: 31\n");
}

} // namespace
} // namespace gpubt::runtime
