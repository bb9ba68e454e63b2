// The finished-launch records the CUDA agent sends among its other records: every field back as
// sent, every record handed on in order (events, not latest-only state), other records left for
// their own reader, a record that says more than it holds an error.
#include "runtime/abi/finished_launches.h"

#include <cstring>

#include <gtest/gtest.h>

#include "runtime/abi/device_abi.h"
#include "runtime/abi/live_maps.h"

namespace gpubt::abi {
namespace {

void append(std::vector<uint8_t> &out, const std::string &bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

FinishedLaunches two_launches(uint32_t pid, uint64_t first_seq) {
  FinishedLaunch l;
  l.seq = first_seq, l.stream = 0x5555deadbeef, l.start_ns = 1000, l.end_ns = 251000;
  l.call_ns = 600;
  l.grid[0] = 8, l.block[0] = 64, l.block[1] = 2, l.device = 1;
  l.kernel = "_Z9vectorAddPKfS0_Pfi";
  FinishedLaunch m = l;
  m.seq = first_seq + 1, m.kernel = "", m.call_ns = 0; // no call time (none recorded)
  return {pid, 4, {l, m}};
}

TEST(FinishedLaunches, EveryRecordInOrderAmongOtherRecords) {
  std::vector<uint8_t> stream;
  append(stream, finished_launches_record(two_launches(10, 1)));
  AgentResults maps;
  maps.images.push_back({0, {}, {std::vector<uint8_t>(24, 1)}, {}, 0});
  append(stream, live_maps_record(10, maps, 5));
  append(stream, finished_launches_record(two_launches(10, 3)));
  std::vector<FinishedLaunches> seen;
  ASSERT_TRUE(take_finished_launches(stream, [&](const FinishedLaunches &r) { seen.push_back(r); }));
  LiveMaps live;
  ASSERT_TRUE(live.take_from(stream));
  EXPECT_TRUE(stream.empty());
  EXPECT_FALSE(live.empty());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].pid, 10u);
  EXPECT_EQ(seen[0].lost, 4u);
  ASSERT_EQ(seen[0].launches.size(), 2u);
  const FinishedLaunch &l = seen[0].launches[0];
  EXPECT_EQ(l.seq, 1u);
  EXPECT_EQ(l.stream, 0x5555deadbeefu);
  EXPECT_EQ(l.start_ns, 1000u);
  EXPECT_EQ(l.end_ns, 251000u);
  EXPECT_EQ(l.call_ns, 600u);
  EXPECT_EQ(seen[0].launches[1].call_ns, 0u);
  EXPECT_EQ(l.grid[0], 8u);
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.device, 1u);
  EXPECT_EQ(l.kernel, "_Z9vectorAddPKfS0_Pfi");
  EXPECT_EQ(seen[0].launches[1].kernel, "");
  EXPECT_EQ(seen[1].launches[0].seq, 3u);
  EXPECT_EQ(seen[1].launches[1].seq, 4u);
}

TEST(FinishedLaunches, ShortRecordIsAnError) {
  // A record whose header claims an entry its payload does not hold: dropped, the next one kept.
  std::string cut = finished_launches_record(FinishedLaunches{3, 0, {}});
  uint64_t two = 2;
  std::memcpy(cut.data() + sizeof(gpubt_ring_record) + sizeof(EventHeader) + 16, &two,
              sizeof two); // Head.count
  std::vector<uint8_t> stream(cut.begin(), cut.end());
  append(stream, finished_launches_record(two_launches(5, 1)));
  std::vector<uint32_t> pids;
  EXPECT_FALSE(take_finished_launches(stream, [&](const FinishedLaunches &r) {
    pids.push_back(r.pid);
  }));
  EXPECT_TRUE(stream.empty());
  EXPECT_EQ(pids, std::vector<uint32_t>{5});
}

} // namespace
} // namespace gpubt::abi
