// The running-launch records the CUDA agent sends among its other records: every field back as
// sent, the other records (live maps) left in order for their own reader, the latest per process.
#include "runtime/abi/running_launches.h"

#include <cstring>

#include <gtest/gtest.h>

#include "runtime/abi/device_abi.h"
#include "runtime/abi/live_maps.h"

namespace gpubt::abi {
namespace {

void append(std::vector<uint8_t> &out, const std::string &bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

RunningLaunches spinning(uint32_t pid, uint64_t sent) {
  RunningLaunch l;
  l.seq = 7, l.stream = 0x5555deadbeef, l.since_ns = 123456789;
  l.grid[0] = 8, l.block[0] = 64, l.block[1] = 2, l.device = 1, l.later = 3, l.exact = true;
  l.graph_kernels = 5;
  l.kernel = "_Z4spinPViPi";
  return {pid, sent, {l, RunningLaunch{}}};
}

TEST(RunningLaunches, RoundTripAmongOtherRecordsLatestPerProcess) {
  std::vector<uint8_t> stream;
  append(stream, running_launches_record(spinning(10, 1)));
  AgentResults maps;
  maps.images.push_back({0, {}, {std::vector<uint8_t>(24, 1)}, {}, 0});
  append(stream, live_maps_record(10, maps, 5));
  append(stream, running_launches_record(spinning(10, 2)));
  RunningTable table;
  ASSERT_TRUE(table.take_from(stream));
  LiveMaps live;
  ASSERT_TRUE(live.take_from(stream));
  EXPECT_TRUE(stream.empty());
  EXPECT_FALSE(live.empty());
  ASSERT_EQ(table.latest().size(), 1u);
  const RunningLaunches &r = table.latest().at(10);
  EXPECT_EQ(r.sent_ns, 2u);
  ASSERT_EQ(r.launches.size(), 2u);
  const RunningLaunch &l = r.launches[0];
  EXPECT_EQ(l.seq, 7u);
  EXPECT_EQ(l.stream, 0x5555deadbeefu);
  EXPECT_EQ(l.since_ns, 123456789u);
  EXPECT_EQ(l.grid[0], 8u);
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.device, 1u);
  EXPECT_EQ(l.later, 3u);
  EXPECT_TRUE(l.exact);
  EXPECT_EQ(l.graph_kernels, 5u);
  EXPECT_EQ(l.kernel, "_Z4spinPViPi");
  EXPECT_EQ(r.launches[1].kernel, "");
}

TEST(RunningLaunches, ShortRecordIsAnError) {
  // A record whose header claims an entry its payload does not hold.
  RunningLaunches empty{3, 1, {}};
  std::string cut = running_launches_record(empty);
  uint64_t two = 2;
  std::memcpy(cut.data() + sizeof(gpubt_ring_record) + sizeof(EventHeader) + 16, &two,
              sizeof two); // Head.count
  std::vector<uint8_t> stream(cut.begin(), cut.end());
  RunningTable table;
  EXPECT_FALSE(table.take_from(stream));
  EXPECT_TRUE(stream.empty());
  EXPECT_TRUE(table.latest().empty());
}

} // namespace
} // namespace gpubt::abi
