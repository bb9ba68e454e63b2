// The --metrics exposition of hand-made maps, verbatim: family names and types, label escaping,
// cumulative buckets on one le set per map, and the per-map series cap. The e2e metrics test
// checks real output with promtool and a real Prometheus.
#include "runtime/output/prometheus_output.h"

#include <gtest/gtest.h>
#include <sstream>

#include "runtime/output/print_map.h"
#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

const ValueType kNone{};

struct Case : MapCase {
  // The maps only, without the health families every scrape ends with.
  std::string exposition(uint32_t max_series = 100) const {
    std::ostringstream out;
    auto output = make_prometheus_output(out, {max_series});
    print_all_maps(*output, spec, data, nullptr);
    output->flush();
    std::string text = out.str();
    return text.substr(0, text.find("# HELP gpubt_attached_probes"));
  }
};

TEST(PrometheusOutput, CountersGaugesAndEscapedKeyLabels) {
  Case c;
  c.add(map_spec("@calls", AggKind::Count, str_t(), uint_t()),
        {entry(str("x"), {u64(1)}), entry(str("a\"b\\c\nd\x1b"), {u64(2), u64(1)})});
  c.add(map_spec("@t", AggKind::Sum, tuple_t({int_t(), str_t()}), int_t()),
        {entry(cat({i64(1), str("scale(float*, int)")}), {i64(-4)})});
  c.add(map_spec("@bytes", AggKind::Sum, kNone, uint_t()), {entry(scalar_key(), {u64(4096)})});
  c.add(map_spec("@", AggKind::None, kNone), {entry(scalar_key(), {i64(5)})});
  c.add(map_spec("@name", AggKind::None, int_t(), str_t()), {entry(i64(7), {str("bash")})});
  EXPECT_EQ(c.exposition(), R"EX(# HELP gpubt_map gpubt map @: a value
# TYPE gpubt_map gauge
gpubt_map 5
# HELP gpubt_bytes_total gpubt map @bytes: sum()
# TYPE gpubt_bytes_total counter
gpubt_bytes_total 4096
# HELP gpubt_calls_total gpubt map @calls: count()
# TYPE gpubt_calls_total counter
gpubt_calls_total{key="a\"b\\\\c\\nd\\x1b"} 3
gpubt_calls_total{key="x"} 1
# HELP gpubt_name gpubt map @name: a value
# TYPE gpubt_name gauge
gpubt_name{key="7",value="bash"} 1
# HELP gpubt_t gpubt map @t: sum()
# TYPE gpubt_t gauge
gpubt_t{key0="1",key1="scale(float*, int)"} -4
)EX");
}

// A newline and the two characters \n, byte 0xff and the four characters \xff: four series.
// Every backslash of a label's text starts an escape, so no two strings share a label.
TEST(PrometheusOutput, DistinctStringsNeverShareALabel) {
  Case c;
  c.add(map_spec("@k", AggKind::Count, str_t(), uint_t()),
        {entry(str("c\nd"), {u64(1)}), entry(str("c\\nd"), {u64(2)}),
         entry(str("e\xff"), {u64(3)}), entry(str("e\\xff"), {u64(4)})});
  EXPECT_EQ(c.exposition(), R"EX(# HELP gpubt_k_total gpubt map @k: count()
# TYPE gpubt_k_total counter
gpubt_k_total{key="e\\\\xff"} 4
gpubt_k_total{key="e\\xff"} 3
gpubt_k_total{key="c\\\\nd"} 2
gpubt_k_total{key="c\\nd"} 1
)EX");
}

TEST(PrometheusOutput, AvgAndStatsAreSummariesWithTheirAverage) {
  Case c;
  c.add(map_spec("@av", AggKind::Avg, int_t()),
        {entry(i64(1), {avg_val(-5, 1), avg_val(-2, 1)}), entry(i64(2), {avg_val(10, 1)})});
  EXPECT_EQ(c.exposition(), R"EX(# HELP gpubt_av gpubt map @av: avg(): count and total
# TYPE gpubt_av summary
gpubt_av_sum{key="1"} -7
gpubt_av_count{key="1"} 2
gpubt_av_sum{key="2"} 10
gpubt_av_count{key="2"} 1
# HELP gpubt_av_average gpubt map @av: avg(): the average, as gpubt prints it
# TYPE gpubt_av_average gauge
gpubt_av_average{key="1"} -3
gpubt_av_average{key="2"} 10
)EX");
}

// Every series of a map gets the same le set (histogram_quantile sums buckets across series).
TEST(PrometheusOutput, HistBucketsAreCumulativeOnOneLeSet) {
  Case c;
  c.add(map_spec("@h", AggKind::Hist, str_t(), uint_t()),
        join({hist_of(str("a"), {1, 5, 6}), hist_of(str("b"), {100})}));
  c.add(lhist_spec("@l", kNone, 0, 100, 10), lhist_of(scalar_key(), {150, 5}, 0, 100, 10));
  EXPECT_EQ(c.exposition(),
            R"EX(# HELP gpubt_h gpubt map @h: hist() (no _sum: the map keeps bucket counts only)
# TYPE gpubt_h histogram
gpubt_h_bucket{key="a",le="1"} 1
gpubt_h_bucket{key="a",le="3"} 1
gpubt_h_bucket{key="a",le="7"} 3
gpubt_h_bucket{key="a",le="127"} 3
gpubt_h_bucket{key="a",le="+Inf"} 3
gpubt_h_count{key="a"} 3
gpubt_h_bucket{key="b",le="1"} 0
gpubt_h_bucket{key="b",le="3"} 0
gpubt_h_bucket{key="b",le="7"} 0
gpubt_h_bucket{key="b",le="127"} 1
gpubt_h_bucket{key="b",le="+Inf"} 1
gpubt_h_count{key="b"} 1
# HELP gpubt_l gpubt map @l: lhist() (no _sum: the map keeps bucket counts only)
# TYPE gpubt_l histogram
gpubt_l_bucket{le="9"} 1
gpubt_l_bucket{le="19"} 1
gpubt_l_bucket{le="29"} 1
gpubt_l_bucket{le="39"} 1
gpubt_l_bucket{le="49"} 1
gpubt_l_bucket{le="59"} 1
gpubt_l_bucket{le="69"} 1
gpubt_l_bucket{le="79"} 1
gpubt_l_bucket{le="89"} 1
gpubt_l_bucket{le="99"} 1
gpubt_l_bucket{le="+Inf"} 2
gpubt_l_count 2
)EX");
}

// Bucket 33 ([2G, 4G)) has bpftrace's JSON bounds min -2147483648, max 0; le is its true bound.
TEST(PrometheusOutput, HistBoundsAreTrueWhereBpftracesJsonOverflows) {
  Case c;
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()), hist_of(scalar_key(), {int64_t(1) << 31}));
  EXPECT_NE(c.exposition().find("gpubt_h_bucket{le=\"4294967295\"} 1\n"), std::string::npos)
      << c.exposition();
}

TEST(PrometheusOutput, SeriesPastTheCapMergeIntoOther) {
  Case c;
  c.add(map_spec("@c", AggKind::Count, int_t(), uint_t()),
        {entry(i64(1), {u64(5)}), entry(i64(2), {u64(1)}), entry(i64(3), {u64(4)}),
         entry(i64(4), {u64(2)})});
  c.add(map_spec("@mn", AggKind::Min, int_t()),
        {entry(i64(1), {minmax(-5)}), entry(i64(2), {minmax(10)}), entry(i64(3), {minmax(-100)})});
  c.add(map_spec("@h", AggKind::Hist, int_t(), uint_t()),
        join({hist_of(i64(1), {1, 1}), hist_of(i64(2), {2}), hist_of(i64(3), {1000})}));
  EXPECT_EQ(c.exposition(1), R"EX(# HELP gpubt_c_total gpubt map @c: count()
# TYPE gpubt_c_total counter
gpubt_c_total{key="1"} 5
gpubt_c_total{other="true"} 7
# HELP gpubt_h gpubt map @h: hist() (no _sum: the map keeps bucket counts only)
# TYPE gpubt_h histogram
gpubt_h_bucket{key="1",le="1"} 2
gpubt_h_bucket{key="1",le="3"} 2
gpubt_h_bucket{key="1",le="1023"} 2
gpubt_h_bucket{key="1",le="+Inf"} 2
gpubt_h_count{key="1"} 2
gpubt_h_bucket{other="true",le="1"} 0
gpubt_h_bucket{other="true",le="3"} 1
gpubt_h_bucket{other="true",le="1023"} 2
gpubt_h_bucket{other="true",le="+Inf"} 2
gpubt_h_count{other="true"} 2
# HELP gpubt_mn gpubt map @mn: min()
# TYPE gpubt_mn gauge
gpubt_mn{key="2"} 10
gpubt_mn{other="true"} -100
)EX");
  EXPECT_NE(c.exposition(0).find("gpubt_c_total{key=\"2\"} 1\n"), std::string::npos);
}

// Prometheus refuses a whole scrape that names a series twice: such a map is left out.
TEST(PrometheusOutput, AMapWhoseNameIsTakenIsLeftOut) {
  Case c;
  c.add(map_spec("@x", AggKind::Hist, kNone, uint_t()), hist_of(scalar_key(), {1}));
  c.add(map_spec("@x_count", AggKind::None, kNone), {entry(scalar_key(), {i64(5)})});
  c.add(map_spec("@attached_probes", AggKind::None, kNone), {entry(scalar_key(), {i64(5)})});
  std::string text = c.exposition();
  EXPECT_NE(text.find("# gpubt: @x_count is left out: the name gpubt_x_count is taken\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# gpubt: @attached_probes is left out: the name gpubt_attached_probes "
                      "is taken\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpubt_x_count 1\n"), std::string::npos) << text;
}

// A record key names its labels (issue 27: per-rank NCCL series): @c[(rank = r, comm = c, op =
// func)] is {rank=,comm=,op=}; beside other key arguments those stay keyN; a field named as a
// label of the exposition's own (le, value, other) or twice gets a name of its own. @_* maps
// are a script's scratch: left out.
ValueType record_t(std::vector<std::string> names, std::vector<ValueType> elems) {
  ValueType t = tuple_t(std::move(elems));
  t.kind = ValueType::NamedTuple;
  t.names = std::move(names);
  return t;
}

TEST(PrometheusOutput, RecordKeysNameTheirLabels) {
  Case c;
  c.add(map_spec("@calls", AggKind::Count, record_t({"rank", "comm", "op"}, {int_t(), uint_t(), str_t()}),
                 uint_t()),
        {entry(cat({i64(1), u64(7), str("ncclAllReduce")}), {u64(3)})});
  c.add(map_spec("@_scratch", AggKind::None, int_t()), {entry(i64(1), {i64(2)})});
  c.add(map_spec("@mixed", AggKind::None,
                 tuple_t({int_t(), record_t({"value", "le", "rank", "rank"},
                                            {int_t(), int_t(), int_t(), int_t()})})),
        {entry(cat({i64(5), i64(1), i64(2), i64(3), i64(4)}), {i64(9)})});
  EXPECT_EQ(c.exposition(), R"EX(# HELP gpubt_calls_total gpubt map @calls: count()
# TYPE gpubt_calls_total counter
gpubt_calls_total{rank="1",comm="7",op="ncclAllReduce"} 3
# HELP gpubt_mixed gpubt map @mixed: a value
# TYPE gpubt_mixed gauge
gpubt_mixed{key0="5",key_value="1",key_le="2",rank="3",rank_2="4"} 9
)EX");
}

TEST(PrometheusOutput, HealthFamiliesEndEveryScrape) {
  std::ostringstream out;
  auto output = make_prometheus_output(out, {});
  output->attached_probes(3);
  output->lost_events(2);
  output->lost_events(1);
  output->dropped_gpu_updates(4);
  output->attached_processes(1);
  output->printf({{{"not a metric\n"}}});
  output->flush();
  EXPECT_EQ(out.str(), R"EX(# HELP gpubt_attached_probes Probes gpubt attached (host and gpu).
# TYPE gpubt_attached_probes gauge
gpubt_attached_probes 3
# HELP gpubt_attached_processes Processes traced (-c or -p) that are running: 1 or 0; 0 without -c or -p.
# TYPE gpubt_attached_processes gauge
gpubt_attached_processes 1
# HELP gpubt_lost_events_total Events dropped because gpubt's ring buffer was full.
# TYPE gpubt_lost_events_total counter
gpubt_lost_events_total 3
# HELP gpubt_gpu_dropped_updates_total gpu map updates dropped on a full table (known when the traced program exits).
# TYPE gpubt_gpu_dropped_updates_total counter
gpubt_gpu_dropped_updates_total 4
)EX");
}

// -f json-keys: a keyed map is a list of entries whose key is one typed value per argument.
TEST(JsonKeysOutput, KeysAreArraysOfTypedValues) {
  Case c;
  c.add(map_spec("@k", AggKind::Count, tuple_t({int_t(), str_t()}), uint_t()),
        {entry(cat({i64(-1), str("scale(float*, int)")}), {u64(3)}),
         entry(cat({i64(2), str("a\"b")}), {u64(1)})});
  c.add(map_spec("@n", AggKind::Count, kNone, uint_t()), {entry(scalar_key(), {u64(4)})});
  c.add(map_spec("@h", AggKind::Hist, str_t(), uint_t()), hist_of(str("x"), {1}));
  std::ostringstream out;
  print_all_maps(*make_output(OutputFormat::JsonKeys, out), c.spec, c.data, nullptr);
  EXPECT_EQ(out.str(), R"EX(

{"type": "hist", "data": {"@h": [{"key": ["x"], "value": [{"min": 1, "max": 1, "count": 1}]}]}}
{"type": "map", "data": {"@k": [{"key": [2, "a\"b"], "value": 1}, {"key": [-1, "scale(float*, int)"], "value": 3}]}}
{"type": "map", "data": {"@n": 4}}
)EX");
}

// A tseries() map is a gauge of each key's newest interval that has a value.
TEST(PrometheusOutput, TseriesIsAGaugeOfTheNewestInterval) {
  Case c;
  abi::MapSpec m = map_spec("@lat", AggKind::Tseries, str_t(8), int_t());
  m.tseries_interval_ns = 100;
  m.tseries_intervals = 4;
  auto slot = [](const char *key, uint64_t epoch, int64_t v) {
    return entry(cat({str(key, 8), u64(epoch % 4)}), {cat({i64(v), u64(1), u64(epoch)})});
  };
  c.add(m, {slot("a", 5, -3), slot("a", 6, 8), slot("b", 5, 2)});
  EXPECT_EQ(c.exposition(), R"EX(# HELP gpubt_lat gpubt map @lat: tseries(), the newest interval's value
# TYPE gpubt_lat gauge
gpubt_lat{key="a"} 8
gpubt_lat{key="b"} 2
)EX");
}

} // namespace
} // namespace gpubt::runtime
