// The layout pass: map specs, device map layouts and value formats, before any lowering.
#include <linux/bpf.h>

#include <map>

#include <gtest/gtest.h>

#include "codegen/layout/launch_uniform_keys.h"
#include "codegen/layout/program_layout.h"
#include "frontend/ast_walk.h"
#include "codegen/layout/value_format.h"
#include "codegen/layout/value_type.h"
#include "runtime/abi/device_abi.h"
#include "tests/support/checked_script.h"

namespace gpubt::codegen::layout {
namespace {

struct Laid {
  gpubt::testing::CheckedScript checked;
  Result<ProgramLayout> layout = make_error("not laid out");
};

Laid lay_out(const std::string &script, LayoutOptions opts = {}) {
  Laid out;
  out.checked = gpubt::testing::check_script(script, {}, true);
  if (out.checked.error.empty())
    out.layout = lay_out_program(*out.checked.prog, out.checked.sema, opts);
  return out;
}

TEST(ProgramLayout, UserMapsThenInternalMaps) {
  auto l = lay_out("uprobe:/bin/sh:main { @b[pid] = count(); @a = 1; }", {.map_max_entries = 100});
  ASSERT_EQ(l.checked.error, "");
  ASSERT_TRUE(l.layout) << l.layout.error();
  const abi::ProgramSpec &spec = l.layout->spec;
  const MapLayout &maps = l.layout->maps;
  ASSERT_EQ(spec.maps.size(), 5u);
  EXPECT_EQ(spec.maps[maps.user.at("@a")].name, "@a");
  EXPECT_EQ(spec.maps[maps.user.at("@b")].name, "@b");
  EXPECT_EQ(spec.maps[maps.user.at("@b")].agg, abi::AggKind::Count);
  EXPECT_EQ(spec.maps[maps.user.at("@b")].max_entries, 100u);
  EXPECT_EQ(maps.ringbuf, spec.ringbuf_map);
  EXPECT_EQ(maps.globals, spec.globals_map);
  EXPECT_EQ(spec.maps[maps.scratch].bpf_type, BPF_MAP_TYPE_PERCPU_ARRAY);
  EXPECT_EQ(maps.saved_args, -1); // the BPF lowering adds the API probes' maps
  EXPECT_TRUE(l.layout->device_maps.empty());
  EXPECT_TRUE(spec.device.maps.empty());
  EXPECT_TRUE(spec.probes.empty());
}

TEST(ProgramLayout, DeviceMapsIndexTheHostSpecs) {
  auto l = lay_out("uprobe:/bin/sh:main { @on = 1; } "
                   "gpu:kretprobe:k / @on / { @c = count(); @k[tid] = sum(lane); }",
                   {.device_map_capacity = 1024});
  ASSERT_EQ(l.checked.error, "");
  ASSERT_TRUE(l.layout) << l.layout.error();
  const abi::ProgramSpec &spec = l.layout->spec;
  ASSERT_EQ(l.layout->device_maps.size(), 3u);
  ASSERT_EQ(spec.device.maps.size(), 3u);
  for (const auto &[name, dm] : l.layout->device_maps) {
    SCOPED_TRACE(name);
    ASSERT_LT(dm.slot, spec.device.maps.size());
    EXPECT_EQ(spec.maps[dm.layout.map_index].name, name);
    EXPECT_EQ(spec.device.maps[dm.slot].map_index, dm.layout.map_index);
  }
  EXPECT_TRUE(l.layout->device_maps.at("@on").layout.from_host);
  EXPECT_EQ(l.layout->device_maps.at("@k").layout.capacity, 1024u);
  EXPECT_GT(l.layout->device_maps.at("@c").stripe_step, 0u); // no gpu probe reads it
}

// An aggregation only gpu probes update whose values a host probe reads is mirrored into its BPF
// map (host_reads); one host probes only print, or a plain map copied to the host, is not.
TEST(ProgramLayout, HostReadsMarkTheAggregationsTheTracerMirrors) {
  auto l = lay_out("gpu:kretprobe:k { @read[kernel] = sum(1); @loop[tid] = count(); "
                   "@printed = count(); @plain[tid] = 1; } "
                   "END { $x = (uint64)@read[\"k\"]; for ($kv : @loop) { } print(@printed); "
                   "$y = @plain[1]; }");
  ASSERT_EQ(l.checked.error, "");
  ASSERT_TRUE(l.layout) << l.layout.error();
  const auto &dm = l.layout->device_maps;
  EXPECT_TRUE(dm.at("@read").layout.host_reads);
  EXPECT_TRUE(dm.at("@loop").layout.host_reads);
  EXPECT_FALSE(dm.at("@printed").layout.host_reads);
  EXPECT_TRUE(dm.at("@printed").layout.host_named);
  EXPECT_FALSE(dm.at("@plain").layout.host_reads);
  EXPECT_TRUE(dm.at("@plain").layout.to_host);
}

// A keyed aggregation updated only under keys the same for a whole launch spreads each key over
// slots by SM; one keyed by a thread's value, read by a gpu probe, or assigned does not.
TEST(ProgramLayout, LaunchUniformKeysSpreadOverSlots) {
  auto l = lay_out("gpu:kretprobe:k { @a[kernel] = count(); @b[kernel, pid, gdim_x * 2] = sum(1); "
                   "@c[\"x\", 3] = hist(tid); @d[gdim_x] = count(); @d[tid] = count(); "
                   "@e[kernel] = sum(1); $v = @e[kernel]; @f[kernel] = tid; @g[bid_x] = count(); "
                   "$k = kernel; @h[$k] = count(); }",
                   {.device_map_capacity = 1024, .device_key_spread = 32});
  ASSERT_EQ(l.checked.error, "");
  ASSERT_TRUE(l.layout) << l.layout.error();
  std::map<std::string, uint32_t> spread;
  for (const auto &[name, dm] : l.layout->device_maps)
    spread[name] = dm.key_spread;
  EXPECT_EQ(spread, (std::map<std::string, uint32_t>{{"@a", 32}, {"@b", 32}, {"@c", 32},
                                                      {"@d", 0}, {"@e", 0}, {"@f", 0},
                                                      {"@g", 0}, {"@h", 0}}));
}

// What a kernel's ctx does not fix in a launch-uniform key: the grid and block sizes, each once.
TEST(ProgramLayout, LaunchValuesInKeys) {
  auto l = lay_out("gpu:kretprobe:k { @a[kernel, pid, probe, 3] = count(); @b[kernel, gdim_x] = "
                   "count(); @c[gdim_x * 2 + gdim_x] = count(); @d[gdim_x, bdim_y] = count(); "
                   "@e[kernel, tid] = count(); }");
  ASSERT_EQ(l.checked.error, "");
  std::map<std::string, std::string> values;
  for_each_expr(*l.checked.prog->probes[0], [&](const frontend::Expr &e) {
    if (e.kind != frontend::ExprKind::Map)
      return;
    const auto &m = e.as<frontend::MapExpr>();
    auto v = launch_values_in_key(m);
    std::string s = v ? "" : "not uniform";
    for (const auto *b : v.value_or(std::vector<const frontend::BuiltinExpr *>{}))
      s += (s.empty() ? "" : ",") + b->name;
    values[m.name] = s;
  });
  EXPECT_EQ(values, (std::map<std::string, std::string>{{"@a", ""},
                                                        {"@b", "gdim_x"},
                                                        {"@c", "gdim_x"},
                                                        {"@d", "gdim_x,bdim_y"},
                                                        {"@e", "not uniform"}}));
}

TEST(ProgramLayout, DeviceCapacityMustBeAPowerOfTwo) {
  auto l = lay_out("gpu:kretprobe:k { @x[tid] = count(); }", {.device_map_capacity = 1000});
  ASSERT_EQ(l.checked.error, "");
  ASSERT_FALSE(l.layout);
  EXPECT_EQ(l.layout.error(), "device map and ring capacities must be powers of two");
  // Without gpu probes the device capacity is not read.
  EXPECT_TRUE(lay_out("BEGIN { @x = 1; }", {.device_map_capacity = 1000}).layout);
}

TEST(ProgramLayout, FindsGpuProbes) {
  auto l = lay_out("BEGIN { } gpu:kprobe:k { @x = count(); }");
  ASSERT_EQ(l.checked.error, "");
  EXPECT_TRUE(has_gpu_probes(*l.checked.prog));
  EXPECT_FALSE(is_gpu_probe(*l.checked.prog->probes[0]));
  EXPECT_TRUE(is_gpu_probe(*l.checked.prog->probes[1]));
  EXPECT_FALSE(has_gpu_probes(*lay_out("BEGIN { }").checked.prog));
}

TEST(ValueFormat, ArgumentsAtEightAlignedOffsets) {
  auto l = lay_out(R"(BEGIN { printf("%d %s %d\n", (int8)1, "abc", (uint16)2); })");
  ASSERT_EQ(l.checked.error, "");
  const auto &call = l.checked.prog->probes[0]->body->stmts[0]->as<frontend::ExprStmt>()
                         .expr->as<frontend::CallExpr>();
  std::vector<const frontend::Expr *> args;
  for (size_t i = 1; i < call.args.size(); ++i)
    args.push_back(call.args[i].get());
  uint32_t payload = 0;
  abi::FormatSpec fs = value_format("%d %s %d\n", args, &payload);
  EXPECT_EQ(fs.format, "%d %s %d\n");
  ASSERT_EQ(fs.args.size(), 3u);
  EXPECT_EQ(fs.args[0].offset, 0u);
  EXPECT_EQ(fs.args[0].type.kind, abi::ValueType::Int);
  EXPECT_EQ(fs.args[1].offset, 8u);
  EXPECT_EQ(fs.args[1].type.kind, abi::ValueType::String);
  uint32_t str_end = 8 + (fs.args[1].type.size + 7) / 8 * 8;
  EXPECT_EQ(fs.args[2].offset, str_end);
  EXPECT_EQ(fs.args[2].type.kind, abi::ValueType::UInt);
  EXPECT_EQ(payload, str_end + 8);
}

TEST(ValueType, AggregationsPrintTheirScalar) {
  using frontend::Type;
  using frontend::TypeKind;
  EXPECT_EQ(to_agg_kind(TypeKind::Hist), abi::AggKind::Hist);
  EXPECT_EQ(to_agg_kind(TypeKind::Integer), abi::AggKind::None);
  abi::ValueType v = to_value_type(Type::integer(4, true));
  EXPECT_EQ(v.kind, abi::ValueType::Int);
  EXPECT_EQ(v.size, 4u);
  Type count;
  count.kind = TypeKind::Count;
  EXPECT_EQ(to_value_type(count).kind, abi::ValueType::UInt);
  EXPECT_EQ(to_value_type(count).size, 8u);
}

} // namespace
} // namespace gpubt::codegen::layout
