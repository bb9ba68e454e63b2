// The live map records agents send among their printf records: taken out of the stream whole,
// the other records left in order, a record cut short kept for the next read, the latest per
// process kept, and a corrupt one said without losing the rest.
#include "runtime/abi/live_maps.h"

#include <cstring>

#include <gtest/gtest.h>

#include "runtime/abi/agent_records.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::abi {
namespace {

std::vector<uint8_t> printf_record(uint32_t index) {
  std::vector<uint8_t> r(sizeof(gpubt_ring_record) + sizeof(EventHeader) + 8);
  gpubt_ring_record head{static_cast<uint32_t>(r.size()), 0};
  EventHeader h{static_cast<uint32_t>(EventKind::Printf), index};
  std::memcpy(r.data(), &head, sizeof head);
  std::memcpy(r.data() + sizeof head, &h, sizeof h);
  return r;
}

AgentResults one_map(int device, uint8_t value) {
  AgentResults r;
  r.images.push_back({device, {}, {std::vector<uint8_t>(24, value)}, {}, 0});
  return r;
}

void append(std::vector<uint8_t> &out, const std::string &bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

TEST(LiveMaps, TakenFromAmongPrintfRecordsLatestPerProcess) {
  std::vector<uint8_t> stream = printf_record(1);
  append(stream, live_maps_record(10, one_map(0, 1), 5));
  auto second = printf_record(2);
  stream.insert(stream.end(), second.begin(), second.end());
  append(stream, live_maps_record(10, one_map(0, 2), 5)); // newer, same process
  append(stream, live_maps_record(11, one_map(1, 3), 5));
  std::string cut = live_maps_record(12, one_map(2, 4), 5);
  append(stream, cut.substr(0, cut.size() - 8)); // the rest comes later

  LiveMaps live;
  ASSERT_TRUE(live.take_from(stream).ok());
  auto expected = printf_record(1);
  expected.insert(expected.end(), second.begin(), second.end());
  expected.insert(expected.end(), cut.begin(), cut.end() - 8);
  EXPECT_EQ(stream, expected);
  AgentResults all = live.results();
  ASSERT_EQ(all.images.size(), 2u);
  EXPECT_EQ(all.images[0].maps[0], std::vector<uint8_t>(24, 2));
  EXPECT_EQ(all.images[1].device, 1);

  std::vector<uint8_t> rest(stream.begin() + 2 * printf_record(0).size(), stream.end());
  rest.insert(rest.end(), cut.end() - 8, cut.end());
  ASSERT_TRUE(live.take_from(rest).ok());
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(live.results().images.size(), 3u);
}

TEST(LiveMaps, ACorruptRecordIsSaidAndTheOthersAreStillTaken) {
  std::string bad = live_maps_record(10, one_map(0, 1), 5);
  bad[sizeof(gpubt_ring_record) + sizeof(EventHeader) + 16] ^= 0x55; // the results' magic
  std::vector<uint8_t> stream(bad.begin(), bad.end());
  append(stream, live_maps_record(11, one_map(0, 7), 5));
  LiveMaps live;
  EXPECT_FALSE(live.take_from(stream).ok());
  EXPECT_TRUE(stream.empty());
  ASSERT_EQ(live.results().images.size(), 1u);
  EXPECT_EQ(live.results().images[0].maps[0], std::vector<uint8_t>(24, 7));
}

TEST(LiveMaps, EachProcessesCopyTimeIsKeptAndAnOlderAgentsRecordHasNone) {
  std::vector<uint8_t> stream;
  append(stream, live_maps_record(10, one_map(0, 1), 1000));
  append(stream, live_maps_record(10, one_map(0, 2), 2000));
  // An agent from before the copy's time: the pid, the results' length, the results.
  std::string results = write_agent_results(one_map(0, 3));
  std::string payload(16, '\0');
  uint64_t words[2] = {11, results.size()};
  std::memcpy(payload.data(), words, sizeof words);
  append(stream, agent_record(EventKind::LiveMaps, payload + results));
  LiveMaps live;
  ASSERT_TRUE(live.take_from(stream).ok());
  EXPECT_EQ(live.copied_ns(10), 2000u);
  EXPECT_EQ(live.copied_ns(11), 0u);
  EXPECT_EQ(live.copied_ns(12), 0u);
  ASSERT_EQ(live.results().images.size(), 2u);
  EXPECT_EQ(live.results().images[1].maps[0], std::vector<uint8_t>(24, 3));
}

} // namespace
} // namespace gpubt::abi
