// Live map images sent sparse (write_sparse_images): only the words not all zero travel, and
// parse_agent_results gives back the whole image byte for byte: empty, all zero, words at either
// end, a last word shorter than 8 bytes, runs joined across short gaps and not across long ones,
// a record of a 64 MiB map with a few slots used a few KiB; corrupt runs refused.
#include <cstring>

#include <gtest/gtest.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/live_maps.h"

namespace gpubt::abi {
namespace {

std::vector<uint8_t> round_trip(const std::vector<uint8_t> &map) {
  std::vector<DeviceImage> images{{3, {7, 8}, {map}, {1, 2}, 4}};
  auto parsed = parse_agent_results(write_sparse_images(images));
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok() || parsed->images.size() != 1 || parsed->images[0].maps.size() != 1)
    return {};
  const DeviceImage &img = parsed->images[0];
  EXPECT_EQ(img.device, 3);
  EXPECT_EQ(img.probe_launches, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(img.ring_records, (std::vector<uint8_t>{1, 2}));
  EXPECT_EQ(img.ring_drops, 4u);
  return img.maps[0];
}

std::vector<uint8_t> with_words(size_t size, std::vector<size_t> offsets) {
  std::vector<uint8_t> map(size, 0);
  for (size_t at : offsets)
    map[at] = uint8_t(at % 251 + 1);
  return map;
}

TEST(SparseImages, RoundTripByteForByte) {
  for (const auto &map :
       {std::vector<uint8_t>{}, std::vector<uint8_t>(4096, 0), std::vector<uint8_t>(13, 0xab),
        with_words(4096, {0}), with_words(4096, {4095}), with_words(4093, {4092}),
        with_words(4096, {8, 16, 24}), with_words(4096, {8, 8 + 8 * 9}),
        with_words(4096, {8, 8 + 8 * 10, 8 + 8 * 30, 1000, 3000})})
    EXPECT_EQ(round_trip(map), map);
}

TEST(SparseImages, ARecordOfAMostlyEmptyMapIsSmall) {
  std::vector<uint8_t> map(64 << 20, 0);
  for (size_t slot : {0, 12345, 400000, 524287})
    std::memset(map.data() + slot * 128, 0x5a, 40);
  AgentResults images;
  images.images.push_back({0, {}, {map, map}, {}, 0});
  std::string record = live_maps_record(9, images, 77);
  EXPECT_LT(record.size(), 4096u);
  std::vector<uint8_t> stream(record.begin(), record.end());
  LiveMaps live;
  ASSERT_TRUE(live.take_from(stream).ok());
  AgentResults got = live.results();
  ASSERT_EQ(got.images.size(), 1u);
  EXPECT_EQ(got.images[0].maps, images.images[0].maps);
  EXPECT_EQ(live.copied_ns(9), 77u);
}

TEST(SparseImages, WholeImagesStillParse) {
  AgentResults r;
  r.images.push_back({1, {}, {with_words(64, {8})}, {}, 0});
  auto parsed = parse_agent_results(write_agent_results(r));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->images[0].maps, r.images[0].maps);
}

TEST(SparseImages, CorruptRunsRefused) {
  std::string good = write_sparse_images({{0, {}, {with_words(64, {8, 40})}, {}, 0}});
  // The map blob follows magic, image count, device, launch count, map count: size, runs,
  // then the first run's offset at byte 56.
  auto patched = [&](size_t at, uint64_t v) {
    std::string b = good;
    std::memcpy(b.data() + at, &v, 8);
    return parse_agent_results(b).ok();
  };
  ASSERT_TRUE(parse_agent_results(good).ok());
  EXPECT_FALSE(patched(56, 64));       // a run past the end
  EXPECT_FALSE(patched(48, 1000));     // more runs than bytes
  EXPECT_FALSE(patched(40, 8));        // a size smaller than the runs
  EXPECT_FALSE(patched(40, ~0ull));    // an absurd size
  EXPECT_FALSE(parse_agent_results(good.substr(0, good.size() - 9)).ok());
}

} // namespace
} // namespace gpubt::abi
