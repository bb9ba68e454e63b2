// Maps shared by host and gpu probes: how each is classified, and the refusals verbatim (the
// message table of frontend/passes/map_sharing.cpp) at the use that makes them refused.
#include <gtest/gtest.h>

#include "frontend/passes/map_sharing.h"
#include "tests/support/checked_script.h"

namespace gpubt::frontend {
namespace {

struct Shared {
  std::map<std::string, MapSharing> sharing;
  std::string diags; // check_types', then (if none) check_map_sharing's
};

Shared analyse(const std::string &text) {
  auto checked = gpubt::testing::check_script(text, {}, true);
  if (!checked.prog)
    return {{}, "PARSE FAILED:\n" + checked.error};
  Shared out;
  for (const auto &[name, sides] : map_sharing(*checked.prog, checked.sema))
    out.sharing[name] = sides.sharing;
  out.diags = checked.error;
  return out;
}

std::string diag(const std::string &text, int col, int end, const std::string &msg) {
  return "stdin:1:" + std::to_string(col) + "-" + std::to_string(end) + ": ERROR: " + msg + "\n" +
         text + "\n" + std::string(col - 1, ' ') + std::string(end - col, '~') + "\n";
}

const std::string kGpuWritten = " is written by both gpu and host probes: a plain map is written "
                                "on one side, host or GPU, and read on the other";
const std::string kToHostCleared =
    " is written by gpu probes: host probes can read and print it but not delete from, clear or "
    "zero it (the GPU's table is copied over the host's at each synchronization)";
const std::string kAggregationRead =
    " is an aggregation updated by both host and gpu probes: probes cannot read, clear or delete "
    "from it yet (each side holds its own part; print() shows them merged)";
const std::string kGpuAggregationUsed =
    " is an aggregation gpu probes update: host probes can read, print(), clear() and zero() it "
    "(not clear() or zero() a min() or max()), but not delete() from it";

TEST(MapSharing, OneSideOnly) {
  auto s = analyse("uprobe:/bin/sh:main { @h = count(); } gpu:kretprobe:k { @g[tid] = 1; }");
  EXPECT_EQ(s.diags, "");
  EXPECT_EQ(s.sharing["@h"], MapSharing::HostOnly);
  EXPECT_EQ(s.sharing["@g"], MapSharing::GpuOnly);
}

// Every aggregation both sides update: each keeps its own part.
TEST(MapSharing, AggregationsUpdatedOnBothSides) {
  for (const char *agg : {"count()", "sum(1)", "min(2)", "max(3)", "avg(4)", "stats(5)", "hist(6)",
                          "lhist(7, 0, 100, 10)"}) {
    std::string a = agg;
    auto s = analyse("uprobe:/bin/sh:main { @c[1] = " + a + "; } gpu:kretprobe:k { @c[tid] = " +
                     a + "; } END { @other = 1; }");
    EXPECT_EQ(s.diags, "") << agg;
    EXPECT_EQ(s.sharing["@c"], MapSharing::Aggregation) << agg;
  }
}

// Host probes write (and read, delete, clear); gpu probes only read: copied to the device.
TEST(MapSharing, PlainMapsHostProbesWriteAndGpuProbesRead) {
  auto s = analyse("uprobe:/bin/sh:main { @start[tid] = nsecs; @n = @start[tid] + 1; } "
                   "uprobe:/bin/sh:exit { delete(@start[tid]); clear(@n); } "
                   "gpu:kprobe:k / @n > 0 / { @lat[tid] = hist(nsecs - @start[tid]); }");
  EXPECT_EQ(s.diags, "");
  EXPECT_EQ(s.sharing["@start"], MapSharing::FromHost);
  EXPECT_EQ(s.sharing["@n"], MapSharing::FromHost);
  EXPECT_EQ(s.sharing["@lat"], MapSharing::GpuOnly);
}

// gpu probes write (assign, compound, ++/--) and read; host probes only read and print: the agent
// copies the device table into the BPF map.
TEST(MapSharing, PlainMapsGpuProbesWriteAndHostProbesRead) {
  auto s = analyse("gpu:kretprobe:k / tid == 0 / { @grid = gdim_x; @n[tid] += 2; @i++; "
                   "@g[tid] = @grid; } "
                   "uprobe:/bin/sh:main { printf(\"%d %d\\n\", @grid, @n[1]); @h = @i; } "
                   "END { print(@g); }");
  EXPECT_EQ(s.diags, "");
  EXPECT_EQ(s.sharing["@grid"], MapSharing::ToHost);
  EXPECT_EQ(s.sharing["@n"], MapSharing::ToHost);
  EXPECT_EQ(s.sharing["@i"], MapSharing::ToHost);
  EXPECT_EQ(s.sharing["@g"], MapSharing::ToHost);
  EXPECT_EQ(s.sharing["@h"], MapSharing::HostOnly);
  const std::string read_on_host =
      "END { printf(\"%d\\n\", @x[0]); } gpu:kretprobe:k { @x[tid_x] += 2; }";
  EXPECT_EQ(analyse(read_on_host).diags, "");
  EXPECT_EQ(analyse(read_on_host).sharing["@x"], MapSharing::ToHost);
}

// A host delete, clear or zero would be undone by the next copy from the GPU.
TEST(MapSharing, HostDeletesOfAMapGpuProbesWriteAreRefused) {
  const std::string del =
      "gpu:kretprobe:k { @x[tid] = 1; } uprobe:/bin/sh:main { delete(@x[1]); }";
  EXPECT_EQ(analyse(del).diags, diag(del, 63, 68, "map @x" + kToHostCleared));
  EXPECT_EQ(analyse(del).sharing["@x"], MapSharing::ToHostCleared);
  const std::string clear = "gpu:kretprobe:k { @x = 1; } END { print(@x); clear(@x); }";
  EXPECT_EQ(analyse(clear).diags, diag(clear, 52, 54, "map @x" + kToHostCleared));
  const std::string zero = "gpu:kretprobe:k { @x++; } END { zero(@x); }";
  EXPECT_EQ(analyse(zero).diags, diag(zero, 38, 40, "map @x" + kToHostCleared));
}

// A probe with a host and a gpu attach point is on both sides.
TEST(MapSharing, MixedProbeIsOnBothSides) {
  auto s = analyse("uprobe:/bin/sh:main, gpu:kprobe:k { @c = count(); }");
  EXPECT_EQ(s.sharing["@c"], MapSharing::Aggregation);
}

// Written by both sides: one side's writes would be lost.
TEST(MapSharing, GpuWritesToASharedPlainMapAreRefused) {
  const std::string assign = "uprobe:/bin/sh:main { @x = 1; } gpu:kretprobe:k { @x = 2; }";
  EXPECT_EQ(analyse(assign).diags, diag(assign, 51, 53, "map @x" + kGpuWritten));
  EXPECT_EQ(analyse(assign).sharing["@x"], MapSharing::GpuWritten);
  const std::string compound_on_host =
      "END { @x[0] += 1; } gpu:kretprobe:k { @x[tid_x] += 2; }";
  EXPECT_EQ(analyse(compound_on_host).diags,
            diag(compound_on_host, 39, 48, "map @x" + kGpuWritten));
  const std::string both = "uprobe:/bin/sh:main, gpu:kretprobe:k { @x = 1; }";
  EXPECT_EQ(analyse(both).sharing["@x"], MapSharing::GpuWritten);
  const std::string incr = "uprobe:/bin/sh:main { @x[1] = 1; } gpu:kretprobe:k { @x[tid]++; }";
  EXPECT_EQ(analyse(incr).diags, diag(incr, 54, 61, "map @x" + kGpuWritten));
}

// A read (either side), print, clear, zero or delete would see one side's part only.
TEST(MapSharing, ReadsOfASharedAggregationAreRefused) {
  const std::string gpu_read =
      "uprobe:/bin/sh:main { @c = count(); } gpu:kretprobe:k { @c = count(); @v = @c; }";
  EXPECT_EQ(analyse(gpu_read).diags, diag(gpu_read, 76, 78, "map @c" + kAggregationRead));
  EXPECT_EQ(analyse(gpu_read).sharing["@c"], MapSharing::AggregationRead);
  // A min or a max cannot be cleared by subtracting (runtime/gpu/device_maps.h).
  const std::string clear = "END { clear(@c); } gpu:kretprobe:k { @c = min(tid); }";
  EXPECT_EQ(analyse(clear).diags, diag(clear, 13, 15, "map @c" + kGpuAggregationUsed));
  // Read as well, the min's clear() is still the use refused.
  const std::string read_clear =
      "END { $v = (int64)@c; zero(@c); } gpu:kretprobe:k { @c = max(tid); }";
  EXPECT_EQ(analyse(read_clear).diags, diag(read_clear, 28, 30, "map @c" + kGpuAggregationUsed));
  // A host delete() of one key would be undone by the next copy of the GPU's values.
  const std::string del = "interval:s:1 { delete(@c[1]); } gpu:kretprobe:k { @c[tid] = count(); }";
  EXPECT_EQ(analyse(del).diags, diag(del, 23, 28, "map @c" + kGpuAggregationUsed));
  EXPECT_EQ(analyse(del).sharing["@c"], MapSharing::GpuAggregationUsed);
}

// Host probes read an aggregation only gpu probes update (the tracer copies the GPU's values into
// its BPF map): in expressions, in for loops, cleared or zeroed too (not a min or max).
TEST(MapSharing, HostProbesReadAggregationsGpuProbesUpdate) {
  for (const char *use :
       {"@v = (int64)@c;", "for ($kv : @t) { @v = $kv.1; }",
        "$x = (uint64)@c / 2; clear(@c); zero(@t);", "if ((uint64)@t[1] > 0) { print(@c); }"}) {
    auto s = analyse(std::string("interval:s:1 { ") + use +
                     " } gpu:kretprobe:k { @c = count(); @t[tid] = sum(tid); }");
    EXPECT_EQ(s.diags, "") << use;
    EXPECT_EQ(s.sharing["@c"], MapSharing::GpuOnly) << use;
    EXPECT_EQ(s.sharing["@t"], MapSharing::GpuOnly) << use;
  }
  auto minmax = analyse("END { @v = (int64)@lo + (int64)@hi; } "
                        "gpu:kretprobe:k { @lo = min(tid); @hi = max(tid); }");
  EXPECT_EQ(minmax.diags, "");
  EXPECT_EQ(minmax.sharing["@lo"], MapSharing::GpuOnly);
}

// print() of an aggregation gpu probes update reads the values the agents send while the program
// runs (merged with the host's part where host probes update it too): not a read of either side.
TEST(MapSharing, HostProbesPrintClearAndZeroAggregationsGpuProbesUpdate) {
  auto gpu = analyse("interval:s:1 { print(@c); } gpu:kretprobe:k { @c = count(); }");
  EXPECT_EQ(gpu.diags, "");
  EXPECT_EQ(gpu.sharing["@c"], MapSharing::GpuOnly);
  auto both = analyse("interval:s:1 { print(@c); } uprobe:/bin/sh:main { @c = count(); } "
                      "gpu:kretprobe:k { @c = count(); }");
  EXPECT_EQ(both.diags, "");
  EXPECT_EQ(both.sharing["@c"], MapSharing::Aggregation);
  auto reset = analyse("interval:s:1 { print(@c); clear(@c); zero(@s); } "
                       "gpu:kretprobe:k { @c = count(); @s[tid] = sum(tid); }");
  EXPECT_EQ(reset.diags, "");
  EXPECT_EQ(reset.sharing["@c"], MapSharing::GpuOnly);
  EXPECT_EQ(reset.sharing["@s"], MapSharing::GpuOnly);
}

// Maps are typed once for the whole program: host and gpu probes cannot disagree on a key.
TEST(MapSharing, KeyTypesMustAgreeAcrossSides) {
  auto s = analyse("uprobe:/bin/sh:main { @c[\"a\"] = count(); } gpu:kretprobe:k { @c[tid] = "
                   "count(); }");
  EXPECT_NE(s.diags.find("ERROR: Argument mismatch for @c: trying to access with arguments: "),
            std::string::npos)
      << s.diags;
  s = analyse("uprobe:/bin/sh:main { @c = count(); } gpu:kretprobe:k { @c = sum(tid); }");
  EXPECT_NE(s.diags.find("ERROR: Type mismatch for @c"), std::string::npos) << s.diags;
}

} // namespace
} // namespace gpubt::frontend
