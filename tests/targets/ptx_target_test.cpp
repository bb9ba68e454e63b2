// gpu probes -> PTX: every script assembles with the real ptxas as a Compute Sanitizer patch
// for sm_90, a few CHECK-style lines on the PTX, the device spec, and gpu-only diagnostics.
#include <gtest/gtest.h>

#include <filesystem>
#include <linux/bpf.h>
#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/device_abi.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

void expect_assembles(const std::string &script) {
  auto c = compile_gpu_script(script);
  ASSERT_EQ(c.error, "") << script;
  ASSERT_FALSE(c.spec.device.ptx.empty()) << script;
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(c.spec.device.ptx, &log), 0) << script << "\n"
                                                   << log << "\n"
                                                   << c.spec.device.ptx;
}

// The mission's example, every aggregation, tuple and string keys, predicates, printf, every
// gpu builtin, variables, control flow, map reads and several probes in one program.
const char *const kScripts[] = {
    "gpu:kretprobe:vectorAdd < @[tid] = count(); >",
    "gpu:kretprobe:vectorAdd { @ = count(); }",
    "gpu:kprobe:vectorAdd { @s = sum(tid_x); @t[bid_x] = sum(tid); }",
    "gpu:kretprobe:k { @a[bid_x] = avg(clock); @st[bid_x] = stats(tid); }",
    "gpu:kretprobe:k { @mn[sm] = min(clock); @mx[sm] = max(clock); @m = min(tid); }",
    "gpu:kretprobe:k { @h = hist(clock); @hk[bid_x] = hist(tid); }",
    "gpu:kretprobe:k { @l[warp] = lhist(lane, 0, 32, 4); @l2 = lhist(tid, 0, 1000, 10); }",
    "gpu:kretprobe:k { @[bid_x, bid_y, tid_z] = count(); @s[lane, warp] = sum(1); }",
    "gpu:kretprobe:k / tid % 2 == 0 && lane < 16 / { @even = count(); }",
    "gpu:kretprobe:k / bid_x == 0 || tid_y > 1 / { @[tid_x] = count(); }",
    R"(gpu:kprobe:k / tid == 0 / { printf("kernel %s start %llu sm %d\n", kernel, nsecs, sm); })",
    R"(gpu:kretprobe:k { printf("%d %d %d %d %d %d %d %d %d %d %d %d %d\n", tid, tid_x, tid_y,
        tid_z, bid_x, bid_y, bid_z, bdim_x, bdim_y, bdim_z, gdim_x, gdim_y, gdim_z);
      printf("%d %d %d %d %d %s %d %s\n", lane, warp, sm, clock, nsecs, kernel, pid, probe); })",
    "gpu:kretprobe:* { @[kernel] = count(); @p[probe, kernel] = count(); }",
    "gpu:kretprobe:k { $t = clock; if ($t > 100) { @last[tid_x] = $t; } else { @low = 1; } "
    "@v[lane] = lane > 16 ? 1 : 0; $n = 0; $n += 2; @n = $n; }",
    "gpu:kretprobe:k { @x[tid_x] += 2; @y = @x[tid_x] + 1; @z[bid_x]++; }",
    "gpu:kprobe:a, gpu:kprobe:b { @e[probe] = count(); } gpu:kretprobe:a { @r = count(); }",
    "gpu:kretprobe:k { @t[tid_x] = (bid_x, kernel); @u = (1, 2); }",
    R"(gpu:kretprobe:k { @c[lane] = lane * 2; printf("%d %d\n", @c[lane], @c[0] + 1); })",
    "uprobe:/bin/sh:main { @host = count(); } gpu:kretprobe:k { @dev = count(); }",
    // Shared: an aggregation both sides update, plain maps host probes write and gpu probes read.
    R"(uprobe:/bin/sh:main { @c[pid] = count(); @s[tid] = nsecs; @n = "host"; @t = (1, "a"); }
       gpu:kretprobe:k { @c[tid] = count(); @l = hist(nsecs - @s[tid]);
                         printf("%s\n", @n); @u = @t; })",
};

// Codegen says whether the probes read the GPU clock (the agent measures it only then), where
// the text of the image no longer has to be searched for it.
TEST(PtxTarget, TheSpecSaysWhetherProbesReadTheClock) {
  for (auto [script, reads] : {std::pair{"gpu:kretprobe:k { @ = count(); }", false},
                               std::pair{"gpu:kretprobe:k { @ = sum(nsecs); }", true},
                               std::pair{"gpu:kretprobe:k /last_thread/ { @ = nsecs - launch_start; }",
                                         true}}) {
    auto got = compile_gpu_script(script);
    ASSERT_EQ(got.error, "") << script;
    EXPECT_EQ(bool(got.spec.device.features & abi::DeviceReadsClock), reads) << script;
  }
}

// And whether they write ring records (the agent drains the ring after each traced launch only
// then): a gpu printf does, a host printf beside gpu probes does not.
TEST(PtxTarget, TheSpecSaysWhetherProbesWriteRecords) {
  for (auto [script, writes] :
       {std::pair{"BEGIN { printf(\"hi\\n\"); } gpu:kretprobe:k { @ = count(); }", false},
        std::pair{"gpu:kretprobe:k /tid == 0/ { printf(\"%d\\n\", bid_x); }", true}}) {
    auto got = compile_gpu_script(script);
    ASSERT_EQ(got.error, "") << script;
    EXPECT_EQ(bool(got.spec.device.features & abi::DeviceRecords), writes) << script;
  }
}

TEST(PtxTarget, EveryScriptAssemblesWithPtxas) {
  for (const char *s : kScripts) {
    SCOPED_TRACE(s);
    expect_assembles(s);
    if (::testing::Test::IsSkipped())
      return;
  }
}

// Every gpu probe bundled in tools/ must assemble too.
TEST(PtxTarget, ToolsAssembleWithPtxas) {
  namespace fs = std::filesystem;
  fs::path tools = fs::path(GPUBT_SOURCE_DIR) / "tools";
  if (!fs::exists(tools))
    GTEST_SKIP() << "no tools/";
  for (const auto &f : fs::directory_iterator(tools)) {
    if (f.path().extension() != ".bt")
      continue;
    std::ifstream in(f.path());
    std::stringstream ss;
    ss << in.rdbuf();
    // Probes that run on the GPU (gpu:hang runs on the host: no PTX). launch_call is a host
    // map's read there (launchlate.bt attached: compile_device_script places no probe).
    if (!std::regex_search(
            ss.str(), std::regex(R"((^|\n)\s*gpu:(k|block_|mem:|load:|store:|atomic:|barrier:))")))
      continue;
    SCOPED_TRACE(f.path().string());
    expect_assembles(ss.str());
  }
}

std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The gpu scripts of the e2e cases (PROG lines) and of the GPU suite (quoted 'gpu:k...'
// literals): those that compile must assemble.
TEST(PtxTarget, TestSuiteScriptsAssembleWithPtxas) {
  namespace fs = std::filesystem;
  std::vector<std::string> scripts;
  fs::path src(GPUBT_SOURCE_DIR);
  for (const auto &f : fs::directory_iterator(src / "tests/e2e/cases")) {
    std::istringstream lines(read_text(f.path()));
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("PROG ", 0) == 0 && line.find("gpu:k") != std::string::npos)
        scripts.push_back(line.substr(5));
  }
  std::regex literal(R"('(gpu:k(?:[^'\\]|\\.)*)')"), placeholder(R"(\{[a-z_]+\})");
  for (const char *suite : {"tests/gpu/run_suite.py"}) {
    std::string text = read_text(src / suite);
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) {
      std::string s = (*it)[1];
      if (std::regex_search(s, placeholder))
        continue; // an f-string template
      for (size_t p = s.find("\\\\"); p != std::string::npos; p = s.find("\\\\", p + 1))
        s.erase(p, 1); // the .py file's \\n is the script's \n
      scripts.push_back(s);
    }
  }
  EXPECT_GE(scripts.size(), 5u);
  for (const auto &s : scripts) {
    SCOPED_TRACE(s);
    auto c = compile_gpu_script(s);
    if (!c.error.empty())
      continue; // a case about a diagnostic
    expect_assembles(s);
    if (::testing::Test::IsSkipped())
      return;
  }
}

TEST(PtxTarget, PatchFunctionSignature) {
  auto c = compile_gpu_script("gpu:kprobe:a { @x = count(); } gpu:kretprobe:b* { @y = hist(nsecs); }");
  ASSERT_EQ(c.error, "");
  const auto &d = c.spec.device;
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.probes[0].function, "gpubt_probe_0");
  EXPECT_EQ(d.probes[0].kernel, "a");
  EXPECT_EQ(d.probes[0].point.kind, abi::ProbePointKind::Entry);
  EXPECT_EQ(d.probes[1].name, "gpu:kretprobe:b*");
  EXPECT_EQ(d.probes[1].point.kind, abi::ProbePointKind::Exit);
  EXPECT_NE(d.ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(d.ptx.find(".version 8.0"), std::string::npos);
  std::string mask = "+" + std::to_string(offsetof(gpubt_device_ctx, probe_mask)) + "]";
  for (const std::string fn : {"gpubt_probe_0", "gpubt_probe_1"}) {
    // The patch runs only where the agent set its bit in probe_mask; the direct variant (what
    // the PTX backend pastes into a matching kernel) does not test it.
    std::string checked = function_text(d.ptx, fn), direct = function_text(d.ptx, fn + "_direct");
    EXPECT_NE(d.ptx.find(".visible .func  (.param .b32 func_retval0) " + fn + "("),
              std::string::npos)
        << fn;
    EXPECT_NE(checked.find(mask), std::string::npos) << checked;
    ASSERT_NE(direct, "") << fn;
    EXPECT_EQ(direct.find(mask), std::string::npos) << direct;
  }
}

// Every probe function holds the lanes that came in with one match on its context pointer
// (lower_device.cpp, held_lanes): the matches of keys come on top of it.
constexpr size_t kHeldLanesMatches = 1;

TEST(PtxTarget, ScalarCountIsOneAtomicPerWarp) {
  auto c = compile_gpu_script("gpu:kretprobe:vectorAdd { @ = count(); }");
  ASSERT_EQ(c.error, "");
  std::string ptx = function_text(c.spec.device.ptx, "gpubt_probe_0_direct");
  EXPECT_NE(ptx.find("activemask.b32"), std::string::npos);
  EXPECT_NE(ptx.find("popc.b32"), std::string::npos);
  // No key: the whole warp is a group (only the held lanes' match).
  EXPECT_EQ(count_of(ptx, "match.any.sync"), kHeldLanesMatches) << ptx;
  // One add of the warp's popc by its leader (a scalar map has one slot and never drops).
  EXPECT_EQ(count_of(ptx, "atom.global.add.u64"), 1u) << ptx;
  EXPECT_NE(ptx.find("%laneid"), std::string::npos);
}

// The lanes that came in (a match on the ctx pointer) leave together: synced, then synced again
// while activemask says they still run apart (bounded), since one sync left a warp in two groups
// after a keyed update (lower_device.cpp, leave_together).
TEST(PtxTarget, ProbeLeavesWithTheLanesThatCameIn) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @[kernel] = count(); @q[lane] = count(); }");
  ASSERT_EQ(c.error, "");
  std::string fn = function_text(c.spec.device.ptx, "gpubt_probe_0_direct");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(fn, m, std::regex(R"(match\.any\.sync\.b64\s+(%r\d+), %rd\d+, %r\d+;)")))
      << fn;
  std::string held = m[1];
  size_t sync = fn.find("bar.warp.sync \t" + held + ";");
  ASSERT_NE(sync, std::string::npos) << fn;
  std::string after = fn.substr(sync);
  ASSERT_TRUE(std::regex_search(after, m, std::regex(R"(activemask\.b32\s+(%r\d+);)"))) << after;
  EXPECT_TRUE(std::regex_search(after, std::regex("setp\\.(eq|ne)\\.b32\\s+%p\\d+, (" +
                                                  std::string(m[1]) + ", " + held + "|" + held +
                                                  ", " + std::string(m[1]) + ");")))
      << after;
}

TEST(PtxTarget, KeyedCountMatchesKeysAcrossTheWarp) {
  auto c = compile_gpu_script("gpu:kretprobe:vectorAdd < @[tid] = count(); >");
  ASSERT_EQ(c.error, "");
  const auto &ptx = c.spec.device.ptx;
  EXPECT_NE(ptx.find("match.any.sync.b64"), std::string::npos);
  EXPECT_NE(ptx.find("atom.acq_rel.gpu.global.cas.b64"), std::string::npos); // slot claim
  EXPECT_NE(ptx.find("st.release.gpu.global.b64"), std::string::npos);       // slot publish
  EXPECT_NE(ptx.find("atom.global.add.u64"), std::string::npos);
}

TEST(PtxTarget, TupleKeysMatchTheWordsThatVary) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @[bid_x, kernel] = count(); }");
  ASSERT_EQ(c.error, "");
  // 8 bytes of bid_x then 64 of kernel, which every lane has: one match, on bid_x's word.
  EXPECT_EQ(count_of(function_text(c.spec.device.ptx, "gpubt_probe_0_direct"), "match.any.sync.b64"),
            kHeldLanesMatches + 1);
}

// The line of TEXT that has both A and B ("" if none).
static std::string line_with(const std::string &text, const std::string &a, const std::string &b) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos)
      return line;
  return "";
}

// A key the same for the whole launch: each update site has gpubt_device_ctx::slot_cache words
// (32, one per SM % 32), and a warp that finds its slot there adds to it at once.
TEST(PtxTarget, LaunchUniformKeysUpdateTheirCachedSlot) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @a[kernel] = count(); @b[probe, kernel] = "
                              "count(); @c[kernel] = max(tid); @d[1] = count(); @e[2] = count(); "
                              "@f[gdim_x, bdim_x] = count(); }");
  ASSERT_EQ(c.error, "");
  std::string fn = function_text(c.spec.device.ptx, "gpubt_probe_0_direct");
  auto word = [](uint32_t n) {
    return "+" + std::to_string(offsetof(gpubt_device_ctx, slot_cache) + 8 * n) + "]";
  };
  // A count's cache word is a hint, read where L1 has it (a weak ld, not ld.relaxed.gpu).
  EXPECT_NE(line_with(fn, "ld.global.b64", word(0)), "") << fn;
  EXPECT_NE(line_with(fn, "ld.global.b64", word(32)), "");
  // A max needs the claimer's start value: the cache word is read with acquire.
  EXPECT_NE(line_with(fn, "ld.acquire.gpu.global.b64", word(64)), "");
  EXPECT_NE(line_with(fn, "ld.global.b64", word(96)), "");
  // The 128 words are given out: @e searches, as does @f (two launch sizes in one key).
  EXPECT_EQ(fn.find(word(128)), std::string::npos);
  // From @a's cache word to its add: no hash (MurmurHash's multiplier), no acquire load, no
  // key compare: the cache word and the table's address (maybe read before) its only loads.
  size_t at = fn.find(line_with(fn, "ld.global.b64", word(0)));
  std::string hit = fn.substr(at, fn.find("atom.global.add.u64", at) - at);
  EXPECT_EQ(hit.find("-49064778989728563"), std::string::npos) << hit;
  EXPECT_EQ(hit.find("ld.acquire"), std::string::npos) << hit;
  EXPECT_LE(count_of(hit, "ld."), 2u) << hit;
  // Every lane has the key: no lane is matched against another (no bucket either).
  EXPECT_EQ(count_of(fn, "match.any.sync"), kHeldLanesMatches);
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string out;
  EXPECT_EQ(run_ptxas(c.spec.device.ptx, &out), 0) << out;
}

// A key of integers, all nonzero: the slot's key words are compared before any acquire load
// (a word of a claimed slot only ever goes from 0 to the key); a max starts from the acquire.
TEST(PtxTarget, NonzeroKeysAreComparedBeforeTheAcquire) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @[tid % 1024] = count(); }");
  ASSERT_EQ(c.error, "");
  std::string fn = function_text(c.spec.device.ptx, "gpubt_probe_0_direct");
  size_t relaxed = fn.find("ld.relaxed.gpu.global.b64"), acquire = fn.find("ld.acquire");
  ASSERT_NE(relaxed, std::string::npos) << fn;
  EXPECT_LT(relaxed, acquire) << fn;
  EXPECT_NE(fn.find("st.relaxed.gpu.global.b64"), std::string::npos); // the claimer's key words
  c = compile_gpu_script("gpu:kretprobe:k { @[tid % 1024] = max(clock); }");
  ASSERT_EQ(c.error, "");
  EXPECT_EQ(function_text(c.spec.device.ptx, "gpubt_probe_0_direct").find("ld.relaxed"),
            std::string::npos);
}

TEST(PtxTarget, SumAndMinReduceAcrossTheGroup) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @s[bid_x] = sum(clock); @m = min(clock); "
                              "@x = max((int64)lane - 5); }");
  ASSERT_EQ(c.error, "");
  const auto &ptx = c.spec.device.ptx;
  EXPECT_NE(ptx.find("shfl.sync.idx.b32"), std::string::npos);
  EXPECT_NE(ptx.find("atom.global.min.u64"), std::string::npos); // clock is unsigned
  EXPECT_NE(ptx.find("atom.global.max.s64"), std::string::npos);
}

TEST(PtxTarget, Builtins) {
  auto c =
      compile_gpu_script("gpu:kretprobe:k { @[nsecs, clock, sm, lane, warp, pid] = count(); }");
  ASSERT_EQ(c.error, "");
  const auto &ptx = c.spec.device.ptx;
  for (const char *reg : {"%globaltimer", "%clock64", "%smid", "%laneid"})
    EXPECT_NE(ptx.find(reg), std::string::npos) << reg;
  // nsecs adds the context's clock offset; pid is read from the context.
  EXPECT_NE(ptx.find("+" + std::to_string(offsetof(gpubt_device_ctx, clock_offset_ns)) + "]"),
            std::string::npos);
  EXPECT_NE(ptx.find("+" + std::to_string(offsetof(gpubt_device_ctx, pid)) + "]"),
            std::string::npos);
}

TEST(PtxTarget, DeviceMapLayouts) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @c = count(); @[tid] = count(); "
                              "@h[bid_x] = hist(clock); @l = lhist(lane, 0, 32, 4); "
                              "@m[bid_x, lane] = max(clock); @v[lane] = (1, kernel); }",
                              {}, {.layout = {.device_map_capacity = 1024}});
  ASSERT_EQ(c.error, "");
  std::map<std::string, abi::DeviceMapSpec> by_name;
  for (const auto &m : c.spec.device.maps)
    by_name[c.spec.maps[m.map_index].name] = m;
  ASSERT_EQ(by_name.size(), 6u);
  auto expect = [&](const char *name, uint32_t cap, uint32_t key, uint32_t value,
                    uint32_t buckets) {
    SCOPED_TRACE(name);
    const auto &m = by_name.at(name);
    EXPECT_EQ(m.capacity, cap);
    EXPECT_EQ(m.key_size, key);
    EXPECT_EQ(m.value_size, value);
    EXPECT_EQ(m.buckets, buckets);
    EXPECT_EQ(m.entry_size, 8 + key + value);
  };
  // Scalar aggregations: an entry per SM (256), a 128-byte line apart (16-byte entries: 8).
  expect("@c", 256 * 8, 0, 8, 0);
  expect("@", 1024, 8, 8, 0);
  expect("@h", 1024, 8, 8 * GPUBT_HIST_BUCKETS, GPUBT_HIST_BUCKETS);
  expect("@l", 256 * 2, 0, 8 * 10, 10);
  expect("@m", 1024, 16, 16, 0);
  expect("@v", 1024, 8, 72, 0);
  EXPECT_EQ(c.spec.device.ring_capacity, GPUBT_DEFAULT_RING_BYTES);
}

// Scalar aggregations are striped (the language cannot read them back in a probe); plain scalar
// values, which probes read and overwrite, keep one entry.
TEST(PtxTarget, OnlyScalarAggregationsAreStriped) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @c = count(); @x = 5; @y = sum(@x); @z += 1; }");
  ASSERT_EQ(c.error, "");
  std::map<std::string, uint32_t> capacity;
  for (const auto &m : c.spec.device.maps)
    capacity[c.spec.maps[m.map_index].name] = m.capacity;
  EXPECT_EQ(capacity,
            (std::map<std::string, uint32_t>{{"@c", 2048}, {"@x", 1}, {"@y", 2048}, {"@z", 1}}));
  EXPECT_NE(c.spec.device.ptx.find("%smid"), std::string::npos);
  for (const auto &m : c.spec.device.maps) // striped sums start at zero: no claims
    EXPECT_EQ(m.prefilled, m.capacity == 2048) << c.spec.maps[m.map_index].name;
}

// By default a keyed map gets GPUBT_DEFAULT_MAP_CAPACITY slots, fewer when they would need more
// than GPUBT_DEFAULT_MAP_BYTES (a hist's every bucket is in its slot).
TEST(PtxTarget, DefaultCapacities) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @[tid] = count(); @h[tid] = hist(clock); }");
  ASSERT_EQ(c.error, "");
  std::map<std::string, abi::DeviceMapSpec> by_name;
  for (const auto &m : c.spec.device.maps)
    by_name[c.spec.maps[m.map_index].name] = m;
  EXPECT_EQ(by_name.at("@").capacity, GPUBT_DEFAULT_MAP_CAPACITY);
  EXPECT_EQ(by_name.at("@h").capacity, 65536u);
  EXPECT_LE(by_name.at("@h").storage_size(), GPUBT_DEFAULT_MAP_BYTES);
  // The probe sequence walks the whole table before it drops an update.
  EXPECT_NE(c.spec.device.ptx.find(std::to_string(GPUBT_DEFAULT_MAP_CAPACITY) + ";"),
            std::string::npos);
}

TEST(PtxTarget, PrintfFormatsJoinTheHostTable) {
  auto c = compile_gpu_script(R"(uprobe:/bin/sh:main { printf("host %d\n", pid); }
                                 gpu:kprobe:k { printf("dev %d %s\n", tid, kernel); })");
  ASSERT_EQ(c.error, "");
  ASSERT_EQ(c.spec.formats.size(), 2u);
  const auto &f = c.spec.formats[1];
  EXPECT_EQ(f.format, "dev %d %s\n");
  ASSERT_EQ(f.args.size(), 2u);
  EXPECT_EQ(f.args[0].offset, 0u);
  EXPECT_EQ(f.args[1].offset, 8u);
  EXPECT_EQ(f.args[1].type.size, 64u);
  EXPECT_NE(c.spec.device.ptx.find("atom.global.add.u64"), std::string::npos); // ring drops
}

std::map<std::string, abi::DeviceMapSpec> device_maps_by_name(const abi::ProgramSpec &spec) {
  std::map<std::string, abi::DeviceMapSpec> out;
  for (const auto &m : spec.device.maps)
    out[spec.maps[m.map_index].name] = m;
  return out;
}

// An aggregation host and gpu probes both update: the device keeps its part as if the map were
// the GPU's alone (a scalar one striped), the host its per-CPU BPF map; they print merged.
TEST(PtxTarget, AggregationsSharedWithHostProbes) {
  auto c = compile_gpu_script("uprobe:/bin/sh:main { @c = count(); @h[pid] = hist(1); } "
                              "gpu:kretprobe:k { @c = count(); @h[tid] = hist(clock); }");
  ASSERT_EQ(c.error, "");
  auto maps = device_maps_by_name(c.spec);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps["@c"].capacity, 2048u);
  EXPECT_TRUE(maps["@c"].prefilled);
  EXPECT_EQ(maps["@h"].capacity, 65536u);
  for (const auto &[name, m] : maps) {
    EXPECT_FALSE(m.from_host) << name;
    EXPECT_EQ(c.spec.maps[m.map_index].bpf_type, uint32_t(BPF_MAP_TYPE_PERCPU_HASH)) << name;
  }
}

// launch_call in a probe on the GPU (issue 25): the from-host copy of an internal scalar map a
// hidden uprobe on libcuda's cuLaunchKernel* writes with nsecs: the same mechanism as the map
// above, which the agent copies into each launch's stream just before the launch.
TEST(PtxTarget, LaunchCallReadsTheHiddenUprobesMap) {
  auto c = compile_gpu_script("gpu:kprobe:k /tid == 0 && launch_call != 0/ { "
                              "@us[kernel] = hist((nsecs - launch_call) / 1000); }");
  ASSERT_EQ(c.error, "");
  auto maps = device_maps_by_name(c.spec);
  ASSERT_EQ(maps.count("@.launch_call"), 1u);
  const auto &m = maps["@.launch_call"];
  EXPECT_TRUE(m.from_host);
  EXPECT_EQ(m.key_size, 0u);
  EXPECT_EQ(m.value_size, 8u);
  EXPECT_TRUE(c.spec.maps[m.map_index].internal); // never printed
  EXPECT_FALSE(c.spec.maps[maps["@us"].map_index].internal);
  ASSERT_EQ(c.spec.probes.size(), 1u); // the one host probe: the hidden uprobe
  const abi::ProbeSpec &up = c.spec.probes[0];
  EXPECT_TRUE(up.hidden);
  EXPECT_EQ(up.kind, abi::AttachKind::Uprobe);
  EXPECT_EQ(up.target, "cuda");
  EXPECT_EQ(up.func, "cuLaunchKernel*");
  EXPECT_FALSE(up.insns.empty());
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(c.spec.device.ptx, &log), 0) << log;
}

// A plain map host probes write and gpu probes only read: its device table is the host's copy,
// as big as the BPF map (rounded up to a power of two, at most 4096), and the probes only look
// entries up: nothing in the PTX claims a slot.
TEST(PtxTarget, MapsHostProbesWriteAndGpuProbesRead) {
  const char *script = R"(uprobe:/bin/sh:main { @start[tid] = nsecs; @on = 1; @who[tid] = comm; }
      gpu:kprobe:k / @on / { @lat = hist(nsecs - @start[tid]); printf("%s\n", @who[tid]); })";
  for (auto [max_entries, capacity] : {std::pair{4096u, 4096u}, {1000u, 1024u}, {100000u, 4096u},
                                       {1u, 1u}}) {
    SCOPED_TRACE(max_entries);
    auto c = compile_gpu_script(script, {}, {.layout = {.map_max_entries = max_entries}});
    ASSERT_EQ(c.error, "");
    auto maps = device_maps_by_name(c.spec);
    ASSERT_EQ(maps.size(), 4u);
    for (const char *name : {"@start", "@on", "@who"}) {
      const auto &m = maps[name];
      EXPECT_TRUE(m.from_host) << name;
      EXPECT_FALSE(m.prefilled) << name;
      EXPECT_EQ(c.spec.maps[m.map_index].bpf_type, uint32_t(BPF_MAP_TYPE_HASH)) << name;
      EXPECT_EQ(m.entry_size, 8 + m.key_size + m.value_size) << name;
    }
    EXPECT_EQ(maps["@start"].capacity, capacity);
    EXPECT_EQ(maps["@start"].key_size, 8u);
    EXPECT_EQ(maps["@start"].value_size, 8u);
    EXPECT_EQ(maps["@on"].capacity, 1u); // scalar
    EXPECT_EQ(maps["@on"].key_size, 0u);
    EXPECT_EQ(maps["@who"].capacity, capacity);
    EXPECT_EQ(maps["@who"].value_size, 16u);
    EXPECT_FALSE(maps["@lat"].from_host);
    EXPECT_EQ(maps["@lat"].capacity, 256u); // striped: entries of 66 buckets pass 128 bytes
  }
  // Without printf (its ring reservation is a CAS), no CAS: reads never claim; a map gpu probes
  // write does (atom.acq_rel.gpu.global.cas.b64).
  auto reads = compile_gpu_script("uprobe:/bin/sh:main { @start[tid] = nsecs; @on = 1; } "
                                  "gpu:kprobe:k / @on && @start[tid] > 0 / { "
                                  "@lat = hist(nsecs - @start[tid]); }");
  ASSERT_EQ(reads.error, "");
  EXPECT_EQ(reads.spec.device.ptx.find(".global.cas."), std::string::npos);
  auto claims = compile_gpu_script("gpu:kretprobe:k { @[tid] = count(); }");
  EXPECT_NE(claims.spec.device.ptx.find(".global.cas."), std::string::npos);
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(compile_gpu_script(script).spec.device.ptx, &log), 0) << log;
}

// A plain map gpu probes write and host probes only read: its device table is what the agent
// copies into the BPF map, sized like a from_host one; gpu probes claim its slots as usual.
TEST(PtxTarget, MapsGpuProbesWriteAndHostProbesRead) {
  const char *script = R"(gpu:kretprobe:k / tid == 0 / { @grid = gdim_x; @n[tid] += 1; @c = count(); }
      uprobe:/bin/sh:main { printf("%d %d\n", @grid, @n[1]); })";
  for (auto [max_entries, capacity] : {std::pair{4096u, 4096u}, {1000u, 1024u}, {100000u, 4096u}}) {
    SCOPED_TRACE(max_entries);
    auto c = compile_gpu_script(script, {}, {.layout = {.map_max_entries = max_entries}});
    ASSERT_EQ(c.error, "");
    auto maps = device_maps_by_name(c.spec);
    ASSERT_EQ(maps.size(), 3u);
    for (const char *name : {"@grid", "@n"}) {
      const auto &m = maps[name];
      EXPECT_TRUE(m.to_host) << name;
      EXPECT_FALSE(m.from_host) << name;
      EXPECT_FALSE(m.prefilled) << name;
      EXPECT_EQ(c.spec.maps[m.map_index].bpf_type, uint32_t(BPF_MAP_TYPE_HASH)) << name;
      EXPECT_EQ(m.entry_size, 8 + m.key_size + m.value_size) << name;
    }
    EXPECT_EQ(maps["@grid"].capacity, 1u); // scalar
    EXPECT_EQ(maps["@n"].capacity, capacity);
    EXPECT_EQ(maps["@n"].key_size, 8u);
    EXPECT_FALSE(maps["@c"].to_host); // gpu only
    EXPECT_NE(c.spec.device.ptx.find(".global.cas."), std::string::npos);
    auto hosts = abi::host_maps_of(c.spec);
    ASSERT_EQ(hosts.size(), 2u);
    for (const auto &h : hosts)
      EXPECT_TRUE(h.to_host);
  }
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(compile_gpu_script(script).spec.device.ptx, &log), 0) << log;
}

// Sharing check_map_sharing refuses is refused by the device lowering too, in the same words.
TEST(PtxTarget, RefusedSharingIsRefusedByCodegenToo) {
  const std::string written = "map @x is written by both gpu and host probes: a plain map is "
                              "written on one side, host or GPU, and read on the other";
  const char *script = "uprobe:/bin/sh:main { @x = 1; } gpu:kretprobe:k { @x = 2; }";
  EXPECT_EQ(compile_gpu_script(script, {}, {.check_sharing = false}).error, written);
  EXPECT_NE(compile_gpu_script(script).error.find("stdin:1:51-53: ERROR: " + written),
            std::string::npos);
  auto read = compile_gpu_script("uprobe:/bin/sh:main { @c = count(); } "
                                 "gpu:kretprobe:k { @c = count(); @v = @c; }",
                                 {}, {.check_sharing = false});
  EXPECT_EQ(read.error.rfind("map @c is an aggregation updated by both host and gpu probes: ", 0),
            0u)
      << read.error;
  auto cleared = compile_gpu_script("gpu:kretprobe:k { @x = 1; } END { clear(@x); }", {},
                                    {.check_sharing = false});
  EXPECT_EQ(cleared.error.rfind("map @x is written by gpu probes: host probes can read and print "
                                "it but not delete from, ",
                                0),
            0u)
      << cleared.error;
}

TEST(PtxTarget, CapacitiesMustBePowersOfTwo) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @x[tid] = count(); }", {},
                              {.layout = {.device_map_capacity = 1000}});
  EXPECT_EQ(c.error, "device map and ring capacities must be powers of two");
}

// The device lowering needs only the layout pass before it: no host probe is lowered here.
TEST(PtxTarget, LowersFromTheLayoutAlone) {
  auto checked = gpubt::testing::check_script(
      R"(gpu:kretprobe:k { @[tid] = count(); printf("%d\n", lane); })", {}, true);
  ASSERT_EQ(checked.error, "");
  auto layout = codegen::layout::lay_out_program(*checked.prog, checked.sema, {});
  ASSERT_TRUE(layout) << layout.error();
  auto target = make_ptx_target({});
  ASSERT_TRUE(target);
  abi::ProgramSpec spec = layout->spec;
  auto st = codegen::device::lower_device_probes(*checked.prog, checked.sema, *layout, *target, {},
                                                 spec);
  ASSERT_TRUE(st) << st.error();
  EXPECT_TRUE(spec.probes.empty());
  ASSERT_EQ(spec.device.probes.size(), 1u);
  EXPECT_EQ(spec.probe_names, std::vector<std::string>{"gpu:kretprobe:k"});
  EXPECT_EQ(spec.formats.size(), 1u);
  ASSERT_EQ(spec.device.maps.size(), 1u);
  EXPECT_EQ(spec.maps[spec.device.maps[0].map_index].name, "@");
  if (!have_ptxas())
    GTEST_SKIP() << "no " << kPtxas;
  std::string log;
  EXPECT_EQ(run_ptxas(spec.device.ptx, &log), 0) << log;
}

// Issue 29: range for and while loops (break, continue), lets and records are plain device code;
// a loop that only some lanes of a warp leave early still reaches the warp-wide aggregation.
TEST(PtxTarget, LoopsLetsAndRecordsAssemble) {
  expect_assembles("gpu:kretprobe:k { for $i : tid % 3 .. 4 { @[$i] = count(); @s = sum($i); } }");
  expect_assembles("gpu:kretprobe:k { $j = 0; while ($j < 10) { $j++; if ($j == 2) { continue; } "
                   "if ($j == tid % 4 + 3) { break; } @w[tid % 4] = count(); } }");
  expect_assembles("gpu:kretprobe:k { let $n = 3; $r = (a = tid % 2, b = bid_x); "
                   "for $i : $r.a .. $n { @r[$r.a, $i] = sum($r.b); } @t[$r] = count(); }");
}

// A for over a map stays host-only: every thread of the launch would walk the whole map.
TEST(PtxTarget, ForOverAMapIsRefused) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @a[1] = 1; for ($kv : @a) { @b = count(); } }");
  EXPECT_NE(c.error.find("for loops over maps are not available in gpu probes: every GPU thread "
                         "would walk the map"),
            std::string::npos)
      << c.error;
}

// The semantic pass keeps host-only builtins and functions out of gpu probes, and the reverse.
TEST(PtxTarget, HostOnlyBuiltinsAreDiagnosed) {
  auto c = compile_gpu_script("gpu:kretprobe:k { @[comm] = count(); }");
  EXPECT_NE(c.error.find("comm is not available in gpu probes"), std::string::npos) << c.error;
  c = compile_gpu_script("gpu:kretprobe:k { @[uid] = count(); }");
  EXPECT_NE(c.error.find("uid is not available in gpu probes"), std::string::npos) << c.error;
  c = compile_gpu_script("uprobe:/bin/sh:main { @[tid_x] = count(); }");
  EXPECT_NE(c.error.find("tid_x is only available in gpu probes"), std::string::npos) << c.error;
  c = compile_gpu_script("gpu:kretprobe:k { exit(); }");
  EXPECT_NE(c.error.find("exit() is not available in gpu probes"), std::string::npos) << c.error;
}

// launch_start / last_thread: a hidden entry probe per kernel pattern takes the launch's earliest
// entry time; the exit probe counts the threads leaving, once per warp.
TEST(PtxTarget, LaunchStateBuiltins) {
  auto c = compile_gpu_script(
      "gpu:kretprobe:busy* /last_thread/ { @us[kernel] = hist((nsecs - launch_start) / 1000); }");
  ASSERT_EQ(c.error, "");
  const auto &d = c.spec.device;
  EXPECT_FALSE(d.launch_state); // the last thread resets it: no reset by the agent per launch
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.probes[1].name, "gpu:kprobe:busy*");
  EXPECT_EQ(d.probes[1].point.kind, abi::ProbePointKind::Entry);
  std::string start = function_text(d.ptx, "gpubt_probe_1_direct");
  EXPECT_NE(start.find("atom.global.min.u64"), std::string::npos) << start;
  EXPECT_NE(start.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_start)) + "]"),
            std::string::npos);
  std::string exit = function_text(d.ptx, "gpubt_probe_0_direct");
  EXPECT_NE(exit.find("atom.global.add.u64"), std::string::npos);
  EXPECT_NE(exit.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_exited)) + "]"),
            std::string::npos);
  // The last lane sets launch_start back to UINT64_MAX and launch_exited to 0 for the next launch.
  EXPECT_NE(exit.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_start)) + "], -1;"),
            std::string::npos) << exit;
  EXPECT_NE(exit.find("+" + std::to_string(offsetof(gpubt_device_ctx, launch_exited)) + "], 0;"),
            std::string::npos) << exit;
  EXPECT_EQ(compile_gpu_script("gpu:kretprobe:k { @x = count(); }").spec.device.launch_state,
            false);
  // launch_start without last_thread: nothing knows a launch's end, the agent resets per launch.
  EXPECT_TRUE(compile_gpu_script("gpu:kretprobe:k { @x = nsecs - launch_start; }")
                  .spec.device.launch_state);
  EXPECT_TRUE(compile_gpu_script("gpu:kretprobe:k /last_thread/ { @x = count(); } "
                                 "gpu:kretprobe:j { @y = nsecs - launch_start; }")
                  .spec.device.launch_state);
  EXPECT_NE(compile_gpu_script("gpu:kretprobe:a,gpu:kretprobe:b { @x = last_thread; }")
                .error.find("stdin:1:40-51: ERROR: last_thread can be used in one gpu probe"),
            std::string::npos);
  EXPECT_NE(compile_gpu_script("gpu:kprobe:k { @x = last_thread; }")
                .error.find("last_thread is only available in gpu:kretprobe probes"),
            std::string::npos);
}

// gpu:block_begin claims the block's word at entry (a compare-and-swap from 0), gpu:block_end
// adds the warp's lanes at exit and frees it; either alone gets the other side as a hidden
// probe on its kernels; the body runs in one lane, whose active_lanes are the probe's.
TEST(PtxTarget, BlockProbes) {
  auto c = compile_gpu_script("gpu:block_begin:k* { @b[sm] = count(); "
                              "@l = hist(popcount(active_lanes)); }");
  ASSERT_EQ(c.error, "");
  const auto &d = c.spec.device;
  EXPECT_TRUE(d.features & abi::DeviceBlockState);
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.probes[0].name, "gpu:block_begin:k*");
  EXPECT_EQ(d.probes[0].point.kind, abi::ProbePointKind::Entry);
  EXPECT_EQ(d.probes[1].name, "gpu:kretprobe:k*"); // hidden: frees the word
  EXPECT_EQ(d.probes[1].point.kind, abi::ProbePointKind::Exit);
  std::string slots = "+" + std::to_string(offsetof(gpubt_device_ctx, block_slots)) + "]";
  std::string begin = function_text(d.ptx, "gpubt_probe_0_direct");
  EXPECT_NE(begin.find(slots), std::string::npos) << begin;
  EXPECT_NE(begin.find("atom.acq_rel.gpu.global.cas.b64"), std::string::npos) << begin;
  EXPECT_NE(begin.find("activemask.b32"), std::string::npos) << begin;
  EXPECT_NE(begin.find("popc.b32"), std::string::npos) << begin;
  std::string end = function_text(d.ptx, "gpubt_probe_1_direct");
  EXPECT_NE(end.find(slots), std::string::npos) << end;
  // Counted only into a word its block holds: a compare-exchange, no wait on another block.
  EXPECT_NE(end.find("atom.acq_rel.gpu.global.cas.b64"), std::string::npos) << end;
  EXPECT_NE(end.find("st.release.gpu.global.b64"), std::string::npos) << end;
  auto e = compile_gpu_script("gpu:block_end:k { @e[bid_x, sm] = count(); }");
  ASSERT_EQ(e.error, "");
  ASSERT_EQ(e.spec.device.probes.size(), 2u);
  EXPECT_EQ(e.spec.device.probes[0].point.kind, abi::ProbePointKind::Exit);
  EXPECT_EQ(e.spec.device.probes[1].name, "gpu:kprobe:k"); // hidden: claims the word
  EXPECT_FALSE(compile_gpu_script("gpu:kprobe:k { @ = count(); }").spec.device.features &
               abi::DeviceBlockState);
  expect_assembles("gpu:block_begin:k { @b[sm] = count(); @l = hist(popcount(active_lanes)); }");
  expect_assembles("gpu:block_end:k { @e[bid_x, bid_y, sm] = count(); @t = max(nsecs); }");
  expect_assembles("gpu:block_begin:k { @b = count(); } gpu:block_end:k { @e = count(); } "
                   "gpu:kretprobe:k { @[popcount(active_lanes)] = count(); }");
}

// check_launch_state refuses a second probe counting last_thread; the device lowering only
// guards against being handed one.
TEST(PtxTarget, ASecondLastThreadPastTheFrontEndIsABug) {
  frontend::SourceFile file("stdin", "gpu:kretprobe:a,gpu:kretprobe:b { @x = last_thread; }");
  frontend::Diagnostics diags;
  auto prog = frontend::parse_program(file, diags);
  ASSERT_TRUE(prog && !diags.has_errors());
  frontend::SemanticInfo sema = frontend::resolve_types(*prog);
  frontend::check_types(*prog, sema, {}, diags);
  ASSERT_FALSE(diags.has_errors()) << diags.render(file);
  auto layout = codegen::layout::lay_out_program(*prog, sema, {});
  ASSERT_TRUE(layout) << layout.error();
  auto art = codegen::bpf::lower_to_bpf(*prog, sema, *layout, {});
  ASSERT_TRUE(art) << art.error();
  auto target = make_ptx_target({});
  ASSERT_TRUE(target);
  auto st = codegen::device::lower_device_probes(*prog, sema, *layout, *target, {}, art->spec);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error(), "BUG: last_thread is counted by more than one gpu probe");
}

// The Compute Sanitizer keeps one patch per point in a module: probes sharing a point get a
// dispatcher in the PTX, which the agent patches instead (`patch`); one alone is patched itself.
TEST(PtxTarget, ProbesSharingAPointGetADispatcher) {
  const char *script = "gpu:kretprobe:a { @x = hist(nsecs); } gpu:kprobe:b { @y = count(); } "
                       "gpu:kretprobe:c { @z = hist(nsecs); }";
  auto c = compile_gpu_script(script);
  ASSERT_EQ(c.error, "");
  const auto &d = c.spec.device;
  ASSERT_EQ(d.probes.size(), 3u);
  EXPECT_EQ(d.probes[0].patch, "gpubt_dispatch_exit");
  EXPECT_EQ(d.probes[1].patch, "gpubt_probe_1"); // alone at its point
  EXPECT_EQ(d.probes[2].patch, "gpubt_dispatch_exit");
  EXPECT_EQ(d.probes[2].function, "gpubt_probe_2"); // what an injector calls directly
  size_t at = d.ptx.find(".func (.param .b32 func_retval0) gpubt_dispatch_exit(");
  ASSERT_NE(at, std::string::npos) << d.ptx;
  std::string dispatch = d.ptx.substr(at, d.ptx.find("\n}\n", at) - at);
  EXPECT_NE(dispatch.find("call (retval0), gpubt_probe_0,"), std::string::npos) << dispatch;
  EXPECT_NE(dispatch.find("call (retval0), gpubt_probe_2,"), std::string::npos) << dispatch;
  EXPECT_EQ(d.ptx.find("gpubt_dispatch_enter"), std::string::npos);
  expect_assembles(script); // ptxas accepts the dispatcher
}

// Memory-access and barrier probes (issue 28): their functions take the Compute Sanitizer's
// callback parameters; two memory probes share a dispatcher with those parameters, and each
// memory patch gets one function per space for the SASS backend, ORing the space into the flags.
// The probe tests its filter on the flags itself; sectors is a ballot of match.any leaders.
TEST(PtxTarget, MemoryAndBarrierProbesTakeTheSanitizersParameters) {
  const char *script = "gpu:load:global:a { @[access, space, access_size] = count(); } "
                       "gpu:mem:b { @s = hist(sectors); @m = max(addr); } "
                       "gpu:barrier:c { @b[barrier_id] = count(); }";
  auto c = compile_gpu_script(script);
  ASSERT_EQ(c.error, "");
  const auto &d = c.spec.device;
  ASSERT_EQ(d.probes.size(), 3u);
  EXPECT_EQ(d.probes[0].point.kind, abi::ProbePointKind::MemoryAccess);
  EXPECT_EQ(d.probes[0].point.access, abi::AccessRead | abi::AccessGlobal);
  EXPECT_EQ(d.probes[1].point.access, 0u);
  EXPECT_EQ(d.probes[2].point.kind, abi::ProbePointKind::Barrier);
  EXPECT_EQ(d.probes[0].patch, "gpubt_dispatch_memory");
  EXPECT_EQ(d.probes[2].patch, "gpubt_probe_2");
  auto text_of = [&](const std::string &fn) { // LLVM's functions and gpubt's own
    size_t b = d.ptx.find("func_retval0) " + fn + "(");
    return b == std::string::npos ? "" : d.ptx.substr(b, d.ptx.find("\n}\n", b) + 3 - b);
  };
  auto params = [&](const std::string &fn) {
    std::string text = text_of(fn);
    std::string head = text.substr(0, text.find('{'));
    std::string out;
    for (size_t at = head.find(".param .b"); at != std::string::npos;
         at = head.find(".param .b", at + 1))
      out += head.substr(at + 9, 2) + " ";
    return out;
  };
  EXPECT_EQ(params("gpubt_probe_0_direct"), "64 64 64 32 32 64 ");
  EXPECT_EQ(params("gpubt_dispatch_memory"), "64 64 64 32 32 64 ");
  EXPECT_EQ(params("gpubt_probe_2_direct"), "64 64 32 32 32 ");
  std::string shared = text_of("gpubt_dispatch_memory_shared");
  EXPECT_NE(shared.find("or.b32"), std::string::npos) << shared;
  EXPECT_NE(shared.find(", " + std::to_string(abi::FlagShared) + ";"), std::string::npos) << shared;
  EXPECT_NE(shared.find("call (retval0), gpubt_dispatch_memory,"), std::string::npos) << shared;
  EXPECT_NE(text_of("gpubt_dispatch_memory_local"), "");
  std::string b = text_of("gpubt_probe_1_direct");
  EXPECT_NE(b.find("match.any.sync.b64"), std::string::npos) << b;
  EXPECT_NE(b.find("vote.sync.ballot.b32"), std::string::npos) << b;
  EXPECT_NE(b.find("cvta.shared.u64"), std::string::npos) << b; // addr of a shared access
  expect_assembles(script);
}

// bank_conflicts: lanes grouped by unit and by bank group (two match.any), a ballot per bit of
// the phase maximum and of the sum, over the window offset the probe is given (no cvta: banks
// are the offset's). A probe narrowed to global memory cannot ask for it.
TEST(PtxTarget, BankConflictsMatchesUnitsAndBanksAndBallotsTheMaximum) {
  const char *script = "gpu:mem:shared:k { @b = hist(bank_conflicts); } "
                       "gpu:load:k { @l[bank_conflicts, sectors] = count(); }";
  auto c = compile_gpu_script(script);
  ASSERT_EQ(c.error, "");
  std::string p = function_text(c.spec.device.ptx, "gpubt_probe_0_direct");
  // The same probe on access_size: what the hist's own warp aggregation adds.
  auto base = compile_gpu_script("gpu:mem:shared:k { @b = hist(access_size); }");
  ASSERT_EQ(base.error, "");
  std::string q = function_text(base.spec.device.ptx, "gpubt_probe_0_direct");
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(p, "match.any.sync.b64"), count(q, "match.any.sync.b64") + 2) << p;
  // space, units, 6 for the phase maximum, 5 to sum the phases
  EXPECT_EQ(count(p, "vote.sync.ballot.b32"), count(q, "vote.sync.ballot.b32") + 13) << p;
  EXPECT_NE(p.find("popc.b32"), std::string::npos) << p;
  EXPECT_EQ(p.find("cvta.shared"), std::string::npos) << p;
  expect_assembles(script);
  EXPECT_EQ(compile_gpu_script("gpu:store:global:k { @ = max(bank_conflicts); }").error,
            "stdin:1:30-44: ERROR: bank_conflicts counts shared-memory requests: "
            "gpu:store:global:k only sees global ones (gpu:store:shared:KERNEL, or "
            "gpu:store:KERNEL where it reads 0 outside shared memory)\n"
            "gpu:store:global:k { @ = max(bank_conflicts); }\n"
            "                             ~~~~~~~~~~~~~~\n");
}

// A gpu:kretprobe that only aggregates what a thread's exit cannot change runs at its entry (the
// Compute Sanitizer's entry patch is far cheaper); anything reading the clock, launch state, a
// map, or printing stays at the exit.
TEST(PtxTarget, ExitProbesThatReadNothingChangingRunAtEntry) {
  auto exit_of = [](const std::string &script) {
    auto c = compile_gpu_script(script);
    EXPECT_EQ(c.error, "") << script;
    return !c.spec.device.probes.empty() &&
           c.spec.device.probes[0].point.kind == abi::ProbePointKind::Exit;
  };
  EXPECT_FALSE(exit_of("gpu:kretprobe:k { @n = count(); }"));
  EXPECT_FALSE(exit_of("gpu:kretprobe:k /tid == 0/ { @[kernel, bid_x] = count(); }"));
  EXPECT_FALSE(exit_of("gpu:kretprobe:k { $t = tid % 4; @h[$t] = hist(bdim_x); }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k { @h = hist(nsecs); }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k /clock > 5/ { @n = count(); }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k { printf(\"%d\\n\", tid); }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k /last_thread/ { @n = count(); }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k { @n = count(); @m = @n; }"));
  EXPECT_TRUE(exit_of("gpu:kretprobe:k { @x = tid; }"));
  EXPECT_FALSE(exit_of("gpu:kprobe:k { @n = count(); }"));
  EXPECT_EQ(compile_gpu_script("gpu:kretprobe:k { @n = count(); }").spec.device.probes[0].name,
            "gpu:kretprobe:k");
}

} // namespace
} // namespace gpubt::targets::testing
