// tseries() maps read from per-CPU slots, as bpftrace head's reduce_tseries_value and
// build_time_series read them: what one CPU's run of a probe (the e2e cases) cannot show.
#include "runtime/output/tseries_rows.h"

#include <gtest/gtest.h>

#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

abi::MapSpec tseries_spec(abi::TseriesAgg agg, ValueType value, uint64_t intervals = 4) {
  abi::MapSpec m = map_spec("@t", AggKind::Tseries, str_t(8), std::move(value));
  m.tseries_interval_ns = 1000;
  m.tseries_intervals = intervals;
  m.tseries_agg = agg;
  return m;
}

// abi::TseriesValue: the value, meta (Last: when it was set; Avg: how many), the epoch.
Bytes slot_value(int64_t value, uint64_t meta, uint64_t epoch) {
  return cat({i64(value), u64(meta), u64(epoch)});
}

MapEntry slot(const char *key, uint64_t epoch, std::vector<Bytes> per_cpu) {
  return entry(cat({str(key, 8), u64(epoch % 4)}), std::move(per_cpu));
}

std::vector<TimeSeries::Point> points(const abi::MapSpec &m, const MapData &data) {
  auto rows = tseries_rows(m, data);
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? std::vector<TimeSeries::Point>{} : rows[0].series.points;
}

// Each CPU keeps its own value of a slot: the newest epoch among them is the slot's, and of the
// CPUs' values for it the latest set wins; an older epoch another CPU left there is ignored.
TEST(TseriesRows, LastTakesTheNewestEpochAndItsLatestValue) {
  auto m = tseries_spec(abi::TseriesAgg::Last, int_t());
  MapData data = {slot("k", 10, {slot_value(3, 100, 10), slot_value(7, 200, 10),
                                 slot_value(9, 300, 6)}),
                  slot("k", 9, {slot_value(-2, 50, 9), slot_value(0, 0, 0)})};
  auto p = points(m, data);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].start_ns, 9000u);
  EXPECT_TRUE(p[0].present);
  EXPECT_EQ(p[0].value, -2);
  EXPECT_EQ(p[1].start_ns, 10000u);
  EXPECT_EQ(p[1].value, 7);
}

TEST(TseriesRows, AvgSumMinMaxFoldTheCpus) {
  MapData data = {slot("k", 5, {slot_value(6, 2, 5), slot_value(3, 1, 5), slot_value(99, 9, 1)})};
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Avg, int_t()), data)[0].value, 3);
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Sum, int_t()), data)[0].value, 9);
  MapData signs = {slot("k", 5, {slot_value(-5, 1, 5), slot_value(2, 1, 5)})};
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Min, int_t()), signs)[0].value, -5);
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Max, int_t()), signs)[0].value, 2);
  // unsigned: -5's bits are the greatest uint64
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Max, uint_t()), signs)[0].value, -5);
  EXPECT_EQ(points(tseries_spec(abi::TseriesAgg::Min, uint_t()), signs)[0].value, 2);
}

// The map's newest epoch ends every key's series; a key starts at its oldest epoch within the
// last num_intervals, and the epochs it has no value for are there, empty.
TEST(TseriesRows, KeysShareTheMapsRangeWithGaps) {
  auto m = tseries_spec(abi::TseriesAgg::Last, int_t());
  MapData data = {slot("b", 12, {slot_value(4, 1, 12)}), slot("b", 10, {slot_value(3, 1, 10)}),
                  slot("a", 13, {slot_value(5, 1, 13)}), slot("a", 8, {slot_value(1, 1, 8)})};
  auto rows = tseries_rows(m, data);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, str("a", 8)); // by key bytes
  ASSERT_EQ(rows[0].series.points.size(), 1u); // epoch 8 is older than 13 - 4 + 1
  EXPECT_EQ(rows[0].series.points[0].value, 5);
  const auto &b = rows[1].series.points;
  ASSERT_EQ(b.size(), 4u); // 10 .. 13
  EXPECT_EQ(b[0].value, 3);
  EXPECT_FALSE(b[1].present);
  EXPECT_EQ(b[2].value, 4);
  EXPECT_FALSE(b[3].present);
}

// A slot no CPU has set (its epoch 0) reads as epoch 0, value 0, as bpftrace reads it.
TEST(TseriesRows, AnUnsetSlotIsEpochZero) {
  auto m = tseries_spec(abi::TseriesAgg::Last, int_t(), 2);
  MapData data = {slot("k", 0, {slot_value(0, 0, 0)}), slot("k", 1, {slot_value(6, 1, 1)})};
  auto p = points(m, data);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].present);
  EXPECT_EQ(p[0].value, 0);
  EXPECT_EQ(p[1].value, 6);
}

} // namespace
} // namespace gpubt::runtime
