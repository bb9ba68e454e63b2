// Map printing against bpftrace 0.17: each expected string is bpftrace's own stdout (after the
// "Attaching 1 probe..." line) for the script in the comment, with the same data built by hand.
#include "runtime/output/print_map.h"

#include <gtest/gtest.h>
#include <sstream>

#include "tests/support/output_fixtures.h"
#include "runtime/output/event_printer.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

struct Case : MapCase {
  std::string exit_output(OutputFormat format) const {
    std::ostringstream out;
    print_all_maps(*make_output(format, out), spec, data, nullptr);
    return out.str();
  }
};

const ValueType kNone{};

// BEGIN { @x[3]=count(); @x[1]=count(); @x[1]=count(); @c = count(); @s["b"]=1; @s["a"]=2;
//         @=5; @a[1,"x"] = 3; exit(); }
TEST(PrintMap, CountsAndPlainIntegersSortByValueMapsByName) {
  Case c;
  c.add(map_spec("@x", AggKind::Count, int_t(), uint_t()),
        {entry(i64(3), {u64(1), u64(0)}), entry(i64(1), {u64(1), u64(1)})});
  c.add(map_spec("@c", AggKind::Count, kNone, uint_t()), {entry(scalar_key(), {u64(1)})});
  c.add(map_spec("@s", AggKind::None, str_t()),
        {entry(str("a"), {i64(2)}), entry(str("b"), {i64(1)})});
  c.add(map_spec("@", AggKind::None, kNone), {entry(scalar_key(), {i64(5)})});
  c.add(map_spec("@a", AggKind::None, tuple_t({int_t(), str_t()})),
        {entry(cat({i64(1), str("x")}), {i64(3)})});
  abi::MapSpec ring = map_spec("ringbuf", AggKind::None, kNone);
  ring.internal = true;
  c.add(ring, {entry(scalar_key(), {i64(9)})});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@: 5
@a[1, x]: 3
@c: 1
@s[b]: 1
@s[a]: 2
@x[3]: 1
@x[1]: 2
)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "map", "data": {"@": 5}}
{"type": "map", "data": {"@a": {"1,x": 3}}}
{"type": "map", "data": {"@c": 1}}
{"type": "map", "data": {"@s": {"b": 1, "a": 2}}}
{"type": "map", "data": {"@x": {"3": 1, "1": 2}}}
)BT");
}

// BEGIN { @a[5]=4; @a[-3]=1; @a[100]=-2; @a[2]=3; @c[2,"b"]="s1"; @c[1,"z"]="s2";
//         @c[1,"a"]="s3"; @c[-1,"q"]="x\"y"; @d[(int32)-5]=(int32)-7; @d[(int32)3]=(int32)8;
//         @e = (1, "two", -3); @f["k"] = ((uint8)200, (int16)-2); @p[probe] = 1; exit(); }
TEST(PrintMap, PlainValuesStringsTuplesAndKeyOrder) {
  Case c;
  c.spec.probe_names = {"BEGIN"};
  c.add(map_spec("@a", AggKind::None, int_t()),
        {entry(i64(5), {i64(4)}), entry(i64(-3), {i64(1)}), entry(i64(100), {i64(-2)}),
         entry(i64(2), {i64(3)})});
  auto key = [](int64_t n, const char *s) { return cat({i64(n), str(s)}); };
  c.add(map_spec("@c", AggKind::None, tuple_t({int_t(), str_t()}), str_t()),
        {entry(key(-1, "q"), {str("x\"y")}), entry(key(2, "b"), {str("s1")}),
         entry(key(1, "z"), {str("s2")}), entry(key(1, "a"), {str("s3")})});
  c.add(map_spec("@d", AggKind::None, int_t(4), int_t(4)),
        {entry(le<int32_t>(3), {le<int32_t>(8)}), entry(le<int32_t>(-5), {le<int32_t>(-7)})});
  c.add(map_spec("@e", AggKind::None, kNone, tuple_t({int_t(), str_t(4), int_t()})),
        {entry(scalar_key(), {cat({i64(1), str("two", 4), i64(-3)})})});
  c.add(map_spec("@f", AggKind::None, str_t(), tuple_t({uint_t(1), int_t(2)})),
        {entry(str("k"), {cat({le<uint8_t>(200), le<int16_t>(-2)})})});
  c.add(map_spec("@p", AggKind::None, ValueType{ValueType::Probe, 8}), {entry(u64(0), {i64(1)})});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@a[100]: -2
@a[-3]: 1
@a[2]: 3
@a[5]: 4
@c[1, a]: s3
@c[1, z]: s2
@c[2, b]: s1
@c[-1, q]: x"y
@d[-5]: -7
@d[3]: 8
@e: (1, two, -3)
@f[k]: (200, -2)
@p[BEGIN]: 1
)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "map", "data": {"@a": {"100": -2, "-3": 1, "2": 3, "5": 4}}}
{"type": "map", "data": {"@c": {"1,a": "s3", "1,z": "s2", "2,b": "s1", "-1,q": "x\"y"}}}
{"type": "map", "data": {"@d": {"-5": -7, "3": 8}}}
{"type": "map", "data": {"@e": [1,"two",-3]}}
{"type": "map", "data": {"@f": {"k": [200,-2]}}}
{"type": "map", "data": {"@p": {"BEGIN": 1}}}
)BT");
}

// BEGIN { @mn[1]=min(-5); @mn[1]=min(3); @mn[2]=min(10); @mn[3]=min(-100); @mx[3]=max(1<<40);
//   @mx[4]=max(7); @av[1]=avg(-5); @av[1]=avg(-2); @av[2]=avg(10); @av[3]=avg(-10);
//   @st[1]=stats(-5); @st[1]=stats(-2); @st[2]=stats(100); @st[3]=stats(0);
//   @us = sum((uint64)-1); @ss=sum(-1); @ss=sum(-1); @sc[2]=sum(-5); @sc[1]=sum(3);
//   @sc[3]=sum(0); exit(); }
TEST(PrintMap, MinMaxAvgStatsSumMergeCpusAndSort) {
  Case c;
  c.add(map_spec("@mn", AggKind::Min, int_t()),
        {entry(i64(1), {minmax(-5), minmax(3)}), entry(i64(2), {minmax(0, false), minmax(10)}),
         entry(i64(3), {minmax(-100), minmax(0, false)})});
  c.add(map_spec("@mx", AggKind::Max, int_t()),
        {entry(i64(3), {minmax(int64_t(1) << 40), minmax(5)}), entry(i64(4), {minmax(7)})});
  c.add(map_spec("@av", AggKind::Avg, int_t()),
        {entry(i64(1), {avg_val(-5, 1), avg_val(-2, 1)}), entry(i64(2), {avg_val(10, 1)}),
         entry(i64(3), {avg_val(-10, 1), avg_val(0, 0)})});
  c.add(map_spec("@st", AggKind::Stats, int_t()),
        {entry(i64(2), {avg_val(100, 1)}), entry(i64(1), {avg_val(-5, 1), avg_val(-2, 1)}),
         entry(i64(3), {avg_val(0, 1)})});
  c.add(map_spec("@us", AggKind::Sum, kNone, uint_t()), {entry(scalar_key(), {u64(UINT64_MAX)})});
  c.add(map_spec("@ss", AggKind::Sum, kNone, int_t()), {entry(scalar_key(), {i64(-1), i64(-1)})});
  c.add(map_spec("@sc", AggKind::Sum, int_t(), int_t()),
        {entry(i64(1), {i64(3)}), entry(i64(2), {i64(-5)}), entry(i64(3), {i64(0)})});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@av[3]: -10
@av[1]: -3
@av[2]: 10

@mn[3]: -100
@mn[1]: -5
@mn[2]: 10
@mx[4]: 7
@mx[3]: 1099511627776
@sc[2]: -5
@sc[3]: 0
@sc[1]: 3
@ss: -2
@st[1]: count 2, average -3, total -7
@st[3]: count 1, average 0, total 0
@st[2]: count 1, average 100, total 100

@us: 18446744073709551615
)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "stats", "data": {"@av": {"3": -10, "1": -3, "2": 10}}}
{"type": "map", "data": {"@mn": {"3": -100, "1": -5, "2": 10}}}
{"type": "map", "data": {"@mx": {"4": 7, "3": 1099511627776}}}
{"type": "map", "data": {"@sc": {"2": -5, "3": 0, "1": 3}}}
{"type": "map", "data": {"@ss": -2}}
{"type": "stats", "data": {"@st": {"1": {"count": 2, "average": -3, "total": -7}, "3": {"count": 1, "average": 0, "total": 0}, "2": {"count": 1, "average": 100, "total": 100}}}}
{"type": "map", "data": {"@us": 18446744073709551615}}
)BT");
}

// BEGIN { @h = hist(0); @h = hist(1); @h = hist(1000000); @h=hist(-3); @h=hist(2); @h=hist(3);
//   @h=hist(3); @h=hist(1024); @l = lhist(-5, 0, 100, 10); @l=lhist(55,0,100,10);
//   @l=lhist(100,0,100,10); @l=lhist(1000,0,100,10); exit(); }
TEST(PrintMap, HistAndLhistLabelsBarsAndTrimming) {
  Case c;
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()),
        hist_of({}, {0, 1, 1000000, -3, 2, 3, 3, 1024}));
  // A scalar map's key may carry the uint64 0 before the bucket index: printed the same.
  c.add(lhist_spec("@l", kNone, 0, 100, 10),
        lhist_of(scalar_key(), {-5, 55, 100, 1000}, 0, 100, 10));
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@h: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@                                   |
[0]                    1 |@@@@@@@@@@@@@@@@@                                   |
[1]                    1 |@@@@@@@@@@@@@@@@@                                   |
[2, 4)                 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 0 |                                                    |
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              0 |                                                    |
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              0 |                                                    |
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@                                   |
[2K, 4K)               0 |                                                    |
[4K, 8K)               0 |                                                    |
[8K, 16K)              0 |                                                    |
[16K, 32K)             0 |                                                    |
[32K, 64K)             0 |                                                    |
[64K, 128K)            0 |                                                    |
[128K, 256K)           0 |                                                    |
[256K, 512K)           0 |                                                    |
[512K, 1M)             1 |@@@@@@@@@@@@@@@@@                                   |

@l: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[0, 10)                0 |                                                    |
[10, 20)               0 |                                                    |
[20, 30)               0 |                                                    |
[30, 40)               0 |                                                    |
[40, 50)               0 |                                                    |
[50, 60)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[60, 70)               0 |                                                    |
[70, 80)               0 |                                                    |
[80, 90)               0 |                                                    |
[90, 100)              0 |                                                    |
[100, ...)             2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "hist", "data": {"@h": [{"max": -1, "count": 1}, {"min": 0, "max": 0, "count": 1}, {"min": 1, "max": 1, "count": 1}, {"min": 2, "max": 3, "count": 3}, {"min": 4, "max": 7, "count": 0}, {"min": 8, "max": 15, "count": 0}, {"min": 16, "max": 31, "count": 0}, {"min": 32, "max": 63, "count": 0}, {"min": 64, "max": 127, "count": 0}, {"min": 128, "max": 255, "count": 0}, {"min": 256, "max": 511, "count": 0}, {"min": 512, "max": 1023, "count": 0}, {"min": 1024, "max": 2047, "count": 1}, {"min": 2048, "max": 4095, "count": 0}, {"min": 4096, "max": 8191, "count": 0}, {"min": 8192, "max": 16383, "count": 0}, {"min": 16384, "max": 32767, "count": 0}, {"min": 32768, "max": 65535, "count": 0}, {"min": 65536, "max": 131071, "count": 0}, {"min": 131072, "max": 262143, "count": 0}, {"min": 262144, "max": 524287, "count": 0}, {"min": 524288, "max": 1048575, "count": 1}]}}
{"type": "hist", "data": {"@l": [{"max": -1, "count": 1}, {"min": 0, "max": 9, "count": 0}, {"min": 10, "max": 19, "count": 0}, {"min": 20, "max": 29, "count": 0}, {"min": 30, "max": 39, "count": 0}, {"min": 40, "max": 49, "count": 0}, {"min": 50, "max": 59, "count": 1}, {"min": 60, "max": 69, "count": 0}, {"min": 70, "max": 79, "count": 0}, {"min": 80, "max": 89, "count": 0}, {"min": 90, "max": 99, "count": 0}, {"min": 100, "count": 2}]}}
)BT");
}

// BEGIN { @l = lhist(1000, 2048, 8192, 1024); @l = lhist(3000, 2048, 8192, 1024);
//   @l=lhist(9000,2048,8192,1024); @l=lhist(5000,2048,8192,1024); unroll(3) { @b = hist(1); }
//   unroll(7) { @b = hist(2); } unroll(10) { @b = hist(4); } @b = hist(8);
//   unroll(13) { @b = hist(64); } exit(); }
TEST(PrintMap, BarLengthsAndKiloLabels) {
  Case c;
  c.add(lhist_spec("@l", kNone, 2048, 8192, 1024),
        lhist_of({}, {1000, 3000, 9000, 5000}, 2048, 8192, 1024));
  c.add(map_spec("@b", AggKind::Hist, kNone, uint_t()),
        {bucket({}, hist_index(1), 3), bucket({}, hist_index(2), 7), bucket({}, hist_index(4), 10),
         bucket({}, hist_index(8), 1),
         entry(u64(hist_index(64)), {u64(6), u64(7)})}); // per-CPU counts add up
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@b: 
[1]                    3 |@@@@@@@@@@@@                                        |
[2, 4)                 7 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@                        |
[4, 8)                10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@            |
[8, 16)                1 |@@@@                                                |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)             13 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@l: 
(..., 2K)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2K, 3K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[3K, 4K)               0 |                                                    |
[4K, 5K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[5K, 6K)               0 |                                                    |
[6K, 7K)               0 |                                                    |
[7K, 8K)               0 |                                                    |
[8K, ...)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "hist", "data": {"@b": [{"min": 1, "max": 1, "count": 3}, {"min": 2, "max": 3, "count": 7}, {"min": 4, "max": 7, "count": 10}, {"min": 8, "max": 15, "count": 1}, {"min": 16, "max": 31, "count": 0}, {"min": 32, "max": 63, "count": 0}, {"min": 64, "max": 127, "count": 13}]}}
{"type": "hist", "data": {"@l": [{"max": 2047, "count": 1}, {"min": 2048, "max": 3071, "count": 1}, {"min": 3072, "max": 4095, "count": 0}, {"min": 4096, "max": 5119, "count": 1}, {"min": 5120, "max": 6143, "count": 0}, {"min": 6144, "max": 7167, "count": 0}, {"min": 7168, "max": 8191, "count": 0}, {"min": 8192, "count": 1}]}}
)BT");
}

// BEGIN { @h[1] = hist(-1); @h[1]=hist(4); @h[2]=hist(0); @h[2]=hist(0); @h[3]=hist(7);
//   @l["a"]=lhist(-5, 0, 100, 10); @l["b"]=lhist(150,0,100,10); @l["b"]=lhist(10,0,100,10);
//   @m[1,"x"]=lhist(5000, 1024, 3146752, 1048576);
//   @m[2,"y"]=lhist(3000000, 1024, 3146752, 1048576); exit(); }
TEST(PrintMap, KeyedHistsSortByTotalThenKey) {
  Case c;
  c.add(map_spec("@h", AggKind::Hist, int_t(), uint_t()),
        join({hist_of(i64(3), {7}), hist_of(i64(2), {0, 0}), hist_of(i64(1), {-1, 4})}));
  c.add(lhist_spec("@l", str_t(), 0, 100, 10),
        join({lhist_of(str("b"), {150, 10}, 0, 100, 10), lhist_of(str("a"), {-5}, 0, 100, 10)}));
  auto key = [](int64_t n, const char *s) { return cat({i64(n), str(s)}); };
  c.add(lhist_spec("@m", tuple_t({int_t(), str_t()}), 1024, 3146752, 1048576),
        join({lhist_of(key(2, "y"), {3000000}, 1024, 3146752, 1048576),
              lhist_of(key(1, "x"), {5000}, 1024, 3146752, 1048576)}));
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@h[3]: 
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@h[1]: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[0]                    0 |                                                    |
[1]                    0 |                                                    |
[2, 4)                 0 |                                                    |
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@h[2]: 
[0]                    2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@l[a]: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@l[b]: 
[10, 20)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[20, 30)               0 |                                                    |
[30, 40)               0 |                                                    |
[40, 50)               0 |                                                    |
[50, 60)               0 |                                                    |
[60, 70)               0 |                                                    |
[70, 80)               0 |                                                    |
[80, 90)               0 |                                                    |
[90, 100)              0 |                                                    |
[100, ...)             1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@m[1, x]: 
[1K, 1025K)            1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@m[2, y]: 
[2049K, 3073K)         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "hist", "data": {"@h": {"3": [{"min": 4, "max": 7, "count": 1}], "1": [{"max": -1, "count": 1}, {"min": 0, "max": 0, "count": 0}, {"min": 1, "max": 1, "count": 0}, {"min": 2, "max": 3, "count": 0}, {"min": 4, "max": 7, "count": 1}], "2": [{"min": 0, "max": 0, "count": 2}]}}}
{"type": "hist", "data": {"@l": {"a": [{"max": -1, "count": 1}], "b": [{"min": 10, "max": 19, "count": 1}, {"min": 20, "max": 29, "count": 0}, {"min": 30, "max": 39, "count": 0}, {"min": 40, "max": 49, "count": 0}, {"min": 50, "max": 59, "count": 0}, {"min": 60, "max": 69, "count": 0}, {"min": 70, "max": 79, "count": 0}, {"min": 80, "max": 89, "count": 0}, {"min": 90, "max": 99, "count": 0}, {"min": 100, "count": 1}]}}}
{"type": "hist", "data": {"@m": {"1,x": [{"min": 1024, "max": 1049599, "count": 1}], "2,y": [{"min": 2098176, "max": 3146751, "count": 1}]}}}
)BT");
}

// BEGIN { @h = hist(1<<30); @h=hist(1<<31); @h = hist(1<<20); @h=hist(0x7fffffffffffffff);
//   exit(); }
// bpftrace 0.17's log2 stops at bucket 33, so 2^63-1 lands with 2^31 in [2G, 4G).
TEST(PrintMap, HistTopBucketOfBpftrace) {
  Case c;
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()),
        {bucket({}, 22, 1), bucket({}, 32, 1), bucket({}, 33, 2)});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@h: 
[1M, 2M)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2M, 4M)               0 |                                                    |
[4M, 8M)               0 |                                                    |
[8M, 16M)              0 |                                                    |
[16M, 32M)             0 |                                                    |
[32M, 64M)             0 |                                                    |
[64M, 128M)            0 |                                                    |
[128M, 256M)           0 |                                                    |
[256M, 512M)           0 |                                                    |
[512M, 1G)             0 |                                                    |
[1G, 2G)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2G, 4G)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "hist", "data": {"@h": [{"min": 1048576, "max": 2097151, "count": 1}, {"min": 2097152, "max": 4194303, "count": 0}, {"min": 4194304, "max": 8388607, "count": 0}, {"min": 8388608, "max": 16777215, "count": 0}, {"min": 16777216, "max": 33554431, "count": 0}, {"min": 33554432, "max": 67108863, "count": 0}, {"min": 67108864, "max": 134217727, "count": 0}, {"min": 134217728, "max": 268435455, "count": 0}, {"min": 268435456, "max": 536870911, "count": 0}, {"min": 536870912, "max": 1073741823, "count": 0}, {"min": 1073741824, "max": 2147483647, "count": 1}, {"min": -2147483648, "max": 0, "count": 2}]}}
)BT");
}

// Buckets past bpftrace's reach keep counting in powers of two (our log2 is 64-bit).
TEST(PrintMap, HistLabelsUpTo2To63) {
  std::ostringstream out;
  abi::ProgramSpec spec;
  spec.maps.push_back(map_spec("@h", AggKind::Hist, kNone, uint_t()));
  print_map(*make_output(OutputFormat::Text, out), spec, 0, hist_of({}, {int64_t(1) << 40, INT64_MAX}), nullptr);
  std::string text = out.str();
  EXPECT_EQ(
      text.substr(0, text.find('\n', 6) + 1),
      "@h: \n[1T, 2T)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n");
  EXPECT_NE(text.find("[4194304T, 8388608T)       1 |@@@@"), std::string::npos) << text;
  std::ostringstream json;
  print_map(*make_output(OutputFormat::Json, json), spec, 0, hist_of({}, {INT64_MAX}), nullptr);
  EXPECT_EQ(json.str(), "{\"type\": \"hist\", \"data\": {\"@h\": [{\"min\": 4611686018427387904, "
                        "\"max\": 9223372036854775807, \"count\": 1}]}}\n");
}

// BEGIN { @mn[1]=min(5); @mx[1]=max(5); @av[1]=avg(4); @st=stats(3); @h=hist(3);
//   @l=lhist(3,0,10,1); @c[1]=count(); @s=sum(3); zero(@mn); zero(@mx); zero(@av); zero(@st);
//   zero(@h); zero(@l); zero(@c); zero(@s); exit(); }
TEST(PrintMap, ZeroedMaps) {
  Case c;
  c.add(map_spec("@mn", AggKind::Min, int_t()), {entry(i64(1), {minmax(0, false)})});
  c.add(map_spec("@mx", AggKind::Max, int_t()), {entry(i64(1), {minmax(0, false)})});
  c.add(map_spec("@av", AggKind::Avg, int_t()), {entry(i64(1), {avg_val(0, 0)})});
  c.add(map_spec("@st", AggKind::Stats, kNone), {entry(scalar_key(), {avg_val(0, 0)})});
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()), {bucket({}, hist_index(3), 0)});
  c.add(lhist_spec("@l", kNone, 0, 10, 1), {bucket({}, lhist_index(3, 0, 10, 1), 0)});
  c.add(map_spec("@c", AggKind::Count, int_t(), uint_t()), {entry(i64(1), {u64(0)})});
  c.add(map_spec("@s", AggKind::Sum, kNone), {entry(scalar_key(), {i64(0)})});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(

@av[1]: 0

@c[1]: 0
@h: 

@l: 

@mn[1]: 0
@mx[1]: 0
@s: 0
@st: count 0, average 0, total 0

)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

{"type": "stats", "data": {"@av": {"1": 0}}}
{"type": "map", "data": {"@c": {"1": 0}}}
{"type": "hist", "data": {"@h": []}}
{"type": "hist", "data": {"@l": []}}
{"type": "map", "data": {"@mn": {"1": 0}}}
{"type": "map", "data": {"@mx": {"1": 0}}}
{"type": "map", "data": {"@s": 0}}
{"type": "stats", "data": {"@st": {"count": 0, "average": 0, "total": 0}}}
)BT");
}

// BEGIN { @mn[1]=min(5); @av[1]=avg(4); @st=stats(3); @h=hist(3); @l=lhist(3,0,10,1);
//   @c[1]=count(); @s=sum(3); @v["a"]="b"; clear(@mn); ... clear(@v); exit(); }
TEST(PrintMap, ClearedMapsPrintBlankLinesInTextAndNothingInJson) {
  Case c;
  c.add(map_spec("@mn", AggKind::Min, int_t()), {});
  c.add(map_spec("@av", AggKind::Avg, int_t()), {});
  c.add(map_spec("@st", AggKind::Stats, kNone), {});
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()), {});
  c.add(lhist_spec("@l", kNone, 0, 10, 1), {});
  c.add(map_spec("@c", AggKind::Count, int_t(), uint_t()), {});
  c.add(map_spec("@s", AggKind::Sum, kNone), {});
  c.spec.maps.push_back(map_spec("@v", AggKind::None, str_t(), str_t())); // no snapshot at all
  EXPECT_EQ(c.exit_output(OutputFormat::Text), R"BT(











)BT");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), R"BT(

)BT");
}

// BEGIN { @c = count(); @k[1] = count(); @s = sum(1); clear(@c); clear(@k); clear(@s); exit(); }:
// bpftrace 0.17 prints the emptied count() map without keys as 0, and no other.
TEST(PrintMap, EmptiedScalarCountPrintsZero) {
  Case c;
  c.add(map_spec("@c", AggKind::Count, kNone, uint_t()), {});
  c.add(map_spec("@k", AggKind::Count, int_t(), uint_t()), {});
  c.add(map_spec("@s", AggKind::Sum, kNone), {});
  EXPECT_EQ(c.exit_output(OutputFormat::Text), "\n\n@c: 0\n\n\n");
  EXPECT_EQ(c.exit_output(OutputFormat::Json), "\n\n{\"type\": \"map\", \"data\": {\"@c\": 0}}\n");
}

// BEGIN { @x[1]=5; @x[2]=7;@x[3]=1; print(@x, 2); print(@x, 2, 2); @h=hist(5); @h=hist(5);
//   @h=hist(5); print(@h, 0, 2); @s[1]=stats(10); @s[2]=stats(20); print(@s, 1, 3);
//   @a[1]=avg(10); @a[2]=avg(20); print(@a, 1, 3); clear(@x); clear(@h); clear(@s);
//   clear(@a); exit(); }
TEST(PrintMap, PrintWithTopAndDiv) {
  Case c;
  c.add(map_spec("@x", AggKind::None, int_t()),
        {entry(i64(3), {i64(1)}), entry(i64(1), {i64(5)}), entry(i64(2), {i64(7)})});
  c.add(map_spec("@h", AggKind::Hist, kNone, uint_t()), hist_of({}, {5, 5, 5}));
  c.add(map_spec("@s", AggKind::Stats, int_t()),
        {entry(i64(1), {avg_val(10, 1)}), entry(i64(2), {avg_val(20, 1)})});
  c.add(map_spec("@a", AggKind::Avg, int_t()),
        {entry(i64(1), {avg_val(10, 1)}), entry(i64(2), {avg_val(20, 1)})});
  for (auto format : {OutputFormat::Text, OutputFormat::Json}) {
    std::ostringstream out;
    auto o = make_output(format, out);
    o->attached_probes(1);
    print_map(*o, c.spec, 0, c.data[0], nullptr, {2, 1});
    print_map(*o, c.spec, 0, c.data[0], nullptr, {2, 2});
    print_map(*o, c.spec, 1, c.data[1], nullptr, {0, 2});
    print_map(*o, c.spec, 2, c.data[2], nullptr, {1, 3});
    print_map(*o, c.spec, 3, c.data[3], nullptr, {1, 3});
    Case cleared{c.spec, std::vector<MapData>(4)};
    out << cleared.exit_output(format);
    EXPECT_EQ(out.str(), format == OutputFormat::Text
                             ? R"BT(Attaching 1 probe...
@x[1]: 5
@x[2]: 7
@x[1]: 2
@x[2]: 3
@h: 
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@s[1]: count 1, average 10, total 10
@s[2]: count 1, average 20, total 20

@a[2]: 6









)BT"
                             : R"BT({"type": "attached_probes", "data": {"probes": 1}}
{"type": "map", "data": {"@x": {"1": 5, "2": 7}}}
{"type": "map", "data": {"@x": {"1": 2, "2": 3}}}
{"type": "hist", "data": {"@h": [{"min": 4, "max": 7, "count": 1}]}}
{"type": "stats", "data": {"@s": {"1": {"count": 1, "average": 10, "total": 10}, "2": {"count": 1, "average": 20, "total": 20}}}}
{"type": "stats", "data": {"@a": {"2": 6}}}


)BT");
  }
}

TEST(PrintMap, EnumsSymbolsAndProbesAsKeysAndValues) {
  abi::ProgramSpec spec;
  spec.enums["cudaError"] = {{0, "cudaSuccess"}, {2, "cudaErrorMemoryAllocation"}};
  spec.probe_names = {"BEGIN", "uprobe:/lib/libcudart.so:cudaMalloc"};
  ValueType err{ValueType::Enum, 4};
  err.enum_name = "cudaError";
  err.enum_signed = true;
  spec.maps.push_back(map_spec("@e", AggKind::Count, err, uint_t()));
  spec.maps.push_back(map_spec("@f", AggKind::None, ValueType{ValueType::UserSym, 8},
                               ValueType{ValueType::Probe, 8}));
  Symbolizer sym = [](uint64_t a) {
    return a == 0x1000 ? std::string("main") : "main+" + std::to_string(a - 0x1000);
  };
  MapData e = {entry(le<int32_t>(2), {u64(3)}), entry(le<int32_t>(0), {u64(1)}),
               entry(le<int32_t>(7), {u64(2)})};
  MapData f = {entry(u64(0x1004), {u64(1)})};
  auto show = [&](int map, const MapData &d, OutputFormat format) {
    std::ostringstream out;
    print_map(*make_output(format, out), spec, map, d, sym);
    return out.str();
  };
  EXPECT_EQ(show(0, e, OutputFormat::Text),
            "@e[cudaSuccess]: 1\n@e[7]: 2\n@e[cudaErrorMemoryAllocation]: 3\n");
  EXPECT_EQ(show(0, e, OutputFormat::Json),
            "{\"type\": \"map\", \"data\": {\"@e\": {\"cudaSuccess\": 1, \"7\": 2, "
            "\"cudaErrorMemoryAllocation\": 3}}}\n");
  EXPECT_EQ(show(1, f, OutputFormat::Text), "@f[main+4]: uprobe:/lib/libcudart.so:cudaMalloc\n");
  EXPECT_EQ(show(1, f, OutputFormat::Json), "{\"type\": \"map\", \"data\": {\"@f\": {\"main+4\": "
                                            "\"uprobe:/lib/libcudart.so:cudaMalloc\"}}}\n");
}

// BEGIN { printf("é\x7f\"\\\r\n"); ... } with -f json: as bpftrace 0.17, except that "é" stays
// UTF-8 where bpftrace writes the invalid "\uffffffc3\uffffffa9".
TEST(OutputEvents, JsonEscapingAsBpftraceButValidUtf8) {
  std::ostringstream out;
  make_output(OutputFormat::Json, out)->printf({{{"\xc3\xa9\x7f\"\\\r\n"}}});
  make_output(OutputFormat::Json, out)->printf({{{"5%|%6|\t\x01\n"}}});
  EXPECT_EQ(out.str(), R"BT({"type": "printf", "data": "é)BT"
                       "\x7f"
                       R"BT(\"\\\r\n"}
{"type": "printf", "data": "5%|%6|\t\u0001\n"}
)BT");
}

// BEGIN { print(5); print("abc"); print((1,"x")); $x = -3; print($x); exit(); }
TEST(OutputEvents, PrintValueAndCounters) {
  abi::ProgramSpec spec;
  std::ostringstream text, json;
  for (auto [out, format] : {std::pair{&text, OutputFormat::Text}, {&json, OutputFormat::Json}}) {
    auto o = make_output(format, *out);
    o->attached_probes(1);
    o->value(make_value(int_t(), i64(5).data(), spec, nullptr));
    o->value(make_value(str_t(), str("abc").data(), spec, nullptr));
    o->value(make_value(tuple_t({int_t(), str_t(2)}), cat({i64(1), str("x", 2)}).data(), spec, nullptr));
    o->value(make_value(int_t(), i64(-3).data(), spec, nullptr));
    o->lost_events(7);
    o->attached_probes(2);
  }
  EXPECT_EQ(text.str(),
            "Attaching 1 probe...\n5\nabc\n(1, x)\n-3\nLost 7 events\nAttaching 2 probes...\n");
  EXPECT_EQ(json.str(), R"BT({"type": "attached_probes", "data": {"probes": 1}}
{"type": "value", "data": 5}
{"type": "value", "data": "abc"}
{"type": "value", "data": [1,"x"]}
{"type": "value", "data": -3}
{"type": "lost_events", "data": {"events": 7}}
{"type": "attached_probes", "data": {"probes": 2}}
)BT");
}

TEST(OutputEvents, TimeUsesStrftimeAndNoNewlineOfItsOwn) {
  setenv("TZ", "UTC", 1);
  tzset();
  std::ostringstream text, json;
  make_output(OutputFormat::Text, text)->time(*format_time("%H:%M:%S\n", 3723));
  make_output(OutputFormat::Json, json)->time(*format_time("%H:%M:%S\n", 3723));
  make_output(OutputFormat::Text, text)->time(*format_time("%H", 3723));
  EXPECT_FALSE(format_time("", 3723));
  EXPECT_EQ(text.str(), "01:02:03\n01");
  EXPECT_EQ(json.str(), "{\"type\": \"time\", \"data\": \"01:02:03\\n\"}\n");
}

} // namespace
} // namespace gpubt::runtime
