// HangWatch (runtime/run/hang_watch.h): which running launches a gpu:hang probe fires for, from
// RunningLaunches records as an agent frames them, among other records.
#include <map>

#include <gtest/gtest.h>

#include "runtime/abi/agent_records.h"
#include "runtime/abi/kernel_name.h"
#include "runtime/run/hang_watch.h"

namespace gpubt::runtime {
namespace {

constexpr uint64_t kSec = 1'000'000'000;

abi::ProgramSpec spec_with(std::vector<std::pair<std::string, uint64_t>> probes) {
  abi::ProgramSpec spec;
  abi::ProbeSpec begin;
  begin.kind = abi::AttachKind::Begin;
  spec.probes.push_back(begin);
  for (auto &[pattern, ns] : probes) {
    abi::ProbeSpec p;
    p.kind = abi::AttachKind::Hang;
    p.func = pattern;
    p.interval_ns = ns;
    spec.probes.push_back(p);
  }
  return spec;
}

abi::RunningLaunch launch(const std::string &kernel, uint64_t stream, uint64_t seq,
                          uint64_t since) {
  abi::RunningLaunch l;
  l.kernel = kernel, l.stream = stream, l.seq = seq, l.since_ns = since, l.exact = true;
  return l;
}

void append(std::vector<uint8_t> &records, const std::string &bytes) {
  records.insert(records.end(), bytes.begin(), bytes.end());
}

struct Fired {
  size_t probe;
  std::string kernel;
  uint64_t seq;
};

TEST(HangWatch, FiresOncePerLaunchPastTheDurationRecordByRecord) {
  HangWatch w(spec_with({{"spin", 2 * kSec}, {"*", 10 * kSec}}));
  ASSERT_TRUE(w.has_probes());
  std::vector<Fired> fired;
  auto fire = [&](size_t probe, const abi::HangCtx &ctx) {
    fired.push_back({probe, reinterpret_cast<const char *>(ctx.kernel), ctx.seq});
  };
  std::vector<uint8_t> records;
  auto other = abi::agent_record(abi::EventKind::Printf, std::string(8, 'x'));
  append(records, other);
  uint64_t t = 100 * kSec;
  auto spin = launch("_Z4spinPi", 1, 3, t - kSec);
  // Three looks in one batch: 1 s, 2.5 s, 4 s; then it is gone; then a new launch at 2 s.
  for (uint64_t at : {t, t + 1500'000'000, t + 3 * kSec})
    append(records, abi::running_launches_record({7, at, {spin}}));
  append(records, abi::running_launches_record({7, t + 4 * kSec, {}}));
  auto again = launch("_Z4spinPi", 1, 4, t + 4 * kSec);
  append(records, abi::running_launches_record({7, t + 6 * kSec, {again}}));
  ASSERT_TRUE(w.take_from(records, fire).ok());
  EXPECT_EQ(records, std::vector<uint8_t>(other.begin(), other.end())); // the others stay
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].probe, 1u);
  EXPECT_EQ(fired[0].kernel, "spin");
  EXPECT_EQ(fired[0].seq, 3u);
  EXPECT_EQ(fired[1].seq, 4u);
  EXPECT_TRUE(w.any_record());
}

TEST(HangWatch, KernelIsTheDeviceNameShortenedAsOnTheGpu) {
  HangWatch w(spec_with({{"*", kSec}}));
  std::string base(80, 'k');
  std::string mangled = "_Z80" + base + "v";
  std::vector<std::string> names;
  std::vector<uint8_t> records;
  append(records, abi::running_launches_record({9, 10 * kSec, {launch(mangled, 0, 1, 0)}}));
  ASSERT_TRUE(w.take_from(records, [&](size_t, const abi::HangCtx &ctx) {
    names.push_back(reinterpret_cast<const char *>(ctx.kernel));
  }).ok());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], abi::device_kernel_name(base));
  EXPECT_LT(names[0].size(), 64u);
  auto oldest = w.oldest(12 * kSec);
  ASSERT_EQ(oldest.size(), 1u);
  EXPECT_EQ(oldest[0].pid, 9u);
  EXPECT_EQ(oldest[0].kernel, names[0]);
  EXPECT_DOUBLE_EQ(oldest[0].age_s, 12.0);
}

TEST(HangWatch, ProbesReadingGpuMapsWaitForACopyAfterTheirLook) {
  HangWatch w(spec_with({{"*", kSec}}));
  w.wait_for_maps(kSec);
  std::vector<std::pair<uint32_t, std::string>> fired;
  auto fire = [&](size_t, const abi::HangCtx &ctx) {
    fired.emplace_back(ctx.pid, reinterpret_cast<const char *>(ctx.kernel));
  };
  std::map<uint32_t, uint64_t> copied = {{7, 9 * kSec}, {8, 9 * kSec}, {9, 9 * kSec}};
  auto copied_at = [&](uint32_t pid) { return copied[pid]; };
  std::vector<uint8_t> records;
  for (uint32_t pid : {7u, 8u, 9u}) // each due at its look, 10 s
    append(records, abi::running_launches_record({pid, 10 * kSec, {launch("_Z4spinPi", 0, 1, 0)}}));
  ASSERT_TRUE(w.take_from(records, fire).ok());
  w.fire_waiting(fire, copied_at, 10 * kSec, false);
  EXPECT_TRUE(fired.empty()); // every copy began before the look
  copied[7] = 10 * kSec + 1;
  w.fire_waiting(fire, copied_at, 10 * kSec + 2, false);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], std::make_pair(7u, std::string("spin")));
  w.fire_waiting(fire, copied_at, 11 * kSec, false); // 8 and 9: no copy came within the wait
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[2].second, "spin");

  append(records, abi::running_launches_record({7, 20 * kSec, {launch("_Z4spinPi", 0, 2, 0)}}));
  ASSERT_TRUE(w.take_from(records, fire).ok());
  w.fire_waiting(fire, copied_at, 20 * kSec, true); // the run ends: it fires with what there is
  EXPECT_EQ(fired.size(), 4u);
}

} // namespace
} // namespace gpubt::runtime
