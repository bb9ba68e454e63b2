// Where each gpu probe runs (issue 25): the launch-level test, one rule a case, with the reason
// -v and --dry-run print for a probe that stays on the GPU.
#include <gtest/gtest.h>

#include "frontend/ast_walk.h"
#include "frontend/parse/parse.h"
#include "frontend/passes/launch_call_uprobe.h"
#include "frontend/passes/place_launch_probes.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {
namespace {

// What the driver does after the checks: placement, then launch_call on the GPU.
struct Placed {
  std::string lines; // the placement lines, one per gpu probe
  std::vector<Provider> providers; // each probe's, after the passes (the hidden one's last)
  std::unique_ptr<Program> program;
  SemanticInfo sema;
  bool added = false; // lower_launch_call_on_device added its probe
};

Placed run(const std::string &text, const std::string &held = "") {
  SourceFile file("stdin", text);
  Diagnostics diags;
  Placed out;
  out.program = parse_program(file, diags);
  if (!out.program || diags.has_errors())
    return {"PARSE FAILED"};
  out.sema = resolve_types(*out.program, {});
  for (const auto &p : place_launch_probes(*out.program, held))
    out.lines += placement_line(p, "stdin") + "\n";
  out.added = lower_launch_call_on_device(*out.program, out.sema);
  for (const auto &probe : out.program->probes)
    out.providers.push_back(probe->attach_points[0].provider);
  return out;
}

std::string place(const std::string &text, std::vector<Provider> *providers = nullptr,
                  const std::string &held = "") {
  Placed p = run(text, held);
  if (providers)
    *providers = p.providers;
  return p.lines;
}

bool per_launch(const std::string &lines) {
  return lines.find("runs in gpubt once per finished launch") != std::string::npos;
}

TEST(PlaceLaunchProbes, KerneltimeRunsPerLaunch) {
  std::vector<Provider> providers;
  std::string lines = place("BEGIN { } gpu:kretprobe:* /last_thread/ { @us[kernel] = "
                            "hist((nsecs - launch_start) / 1000); }",
                            &providers);
  EXPECT_TRUE(per_launch(lines)) << lines;
  EXPECT_EQ(providers[1], Provider::GpuLaunch);
}

TEST(PlaceLaunchProbes, SaysWhichPerLaunchProbeReadsLaunchCall) {
  auto reads = [](const std::string &text, const std::string &held = "") {
    SourceFile file("stdin", text);
    Diagnostics diags;
    auto program = parse_program(file, diags);
    EXPECT_TRUE(program && !diags.has_errors());
    resolve_types(*program, {});
    auto placed = place_launch_probes(*program, held);
    return !placed.empty() && placed[0].reads_launch_call;
  };
  std::string late = "gpu:kretprobe:* /last_thread/ { @w = hist(launch_start - launch_call); }";
  EXPECT_TRUE(reads(late));
  EXPECT_FALSE(reads("gpu:kretprobe:* /last_thread/ { @d = hist(nsecs - launch_start); }"));
  EXPECT_FALSE(reads(late, "held here")); // on the GPU: a hidden uprobe gives it, not the timer
}

TEST(PlaceLaunchProbes, LaunchLevelConditionsBothWays) {
  EXPECT_TRUE(per_launch(place("gpu:kretprobe:k /last_thread && gdim_x > 2/ { @n = count(); }")));
  EXPECT_TRUE(per_launch(
      place("gpu:kretprobe:k /bdim_x == 256 && last_thread/ { printf(\"%s %d\\n\", kernel, pid); }")));
}

TEST(PlaceLaunchProbes, AThreadValueKeepsItOnTheGpuAndSaysWhich) {
  std::vector<Provider> providers;
  EXPECT_EQ(place("gpu:kretprobe:k /last_thread/ { @n = count(); @t = tid_x; }", &providers),
            "gpu:kretprobe:k runs on the GPU in every thread: stdin:1:52: reads tid_x, a value of "
            "each thread\n");
  EXPECT_EQ(providers[0], Provider::GpuKretprobe);
  EXPECT_NE(place("gpu:kretprobe:k /last_thread && sm == 0/ { @n = count(); }").find("reads sm"),
            std::string::npos);
  EXPECT_NE(place("gpu:kretprobe:k /last_thread/ { @n = count(clock); }").find("reads clock"),
            std::string::npos);
}

TEST(PlaceLaunchProbes, PredicateMustBeLastThread) {
  EXPECT_NE(place("gpu:kretprobe:k { @n = last_thread; }").find("its predicate is not"),
            std::string::npos);
  EXPECT_NE(place("gpu:kretprobe:k /!last_thread/ { @n = count(); }").find("its predicate is not"),
            std::string::npos);
}

// The launch timer and the Sanitizer cannot share a process: any gpu probe that stays on the
// GPU (sharing a map or not) keeps the launch-level one there too.
TEST(PlaceLaunchProbes, AnotherGpuProbeKeepsItOnTheGpu) {
  std::string lines = place("gpu:kprobe:k { @n = count(); } "
                            "gpu:kretprobe:k /last_thread/ { @n = count(); }");
  EXPECT_NE(lines.find("another gpu probe stays on the GPU (gpu:kprobe:k)"), std::string::npos)
      << lines;
  EXPECT_FALSE(per_launch(place("gpu:kprobe:j { @m = count(); } "
                                "gpu:kretprobe:k /last_thread/ { @n = count(); }")));
  EXPECT_FALSE(per_launch(place("gpu:hang:j { @m = count(); } "
                                "gpu:kretprobe:k /last_thread/ { @n = count(); }")));
  // A map only host probes share is no reason: the probe moves to the host with it.
  EXPECT_TRUE(per_launch(place("uprobe:/bin/true:main { @n = count(); } "
                               "gpu:kretprobe:k /last_thread/ { @n = count(); }")));
}

// -p or every agent-enabled process: the agent has had the Sanitizer since the process started.
TEST(PlaceLaunchProbes, HeldRunsKeepThemOnTheGpu) {
  std::vector<Provider> providers;
  std::string lines = place("gpu:kretprobe:k /last_thread/ { @n = count(); }", &providers,
                            "the process is attached to");
  EXPECT_FALSE(per_launch(lines)) << lines;
  EXPECT_NE(lines.find("the process is attached to"), std::string::npos) << lines;
  EXPECT_EQ(providers, std::vector<Provider>{Provider::GpuKretprobe});
}

// launch_call (the launch call's time) is a launch-level value: read with others, the probe moves
// and reads it from the launch's record: no uprobe, no map.
TEST(PlaceLaunchProbes, LaunchCallMovesWithTheProbe) {
  Placed p = run("gpu:kretprobe:* /last_thread && launch_call != 0/ { "
                 "@us[kernel] = hist((launch_start - launch_call) / 1000); }");
  EXPECT_TRUE(per_launch(p.lines)) << p.lines;
  EXPECT_EQ(p.providers, std::vector<Provider>{Provider::GpuLaunch});
  EXPECT_FALSE(p.added);
  EXPECT_EQ(p.sema.maps.count(kLaunchCallMap), 0u);
}

// Where the probe stays on the GPU (a thread's value, held, another gpu probe), launch_call is a
// read of a host map a hidden uprobe on libcuda's launch calls writes (each launch gets the
// value of its own call: the agent copies the map into the launch's stream before it).
TEST(PlaceLaunchProbes, LaunchCallOnTheGpuReadsTheHiddenUprobesMap) {
  Placed p = run("gpu:kretprobe:k /last_thread && launch_call != 0/ { @t[tid] = count(); "
                 "@c = launch_start - launch_call; }");
  EXPECT_FALSE(per_launch(p.lines)) << p.lines;
  ASSERT_TRUE(p.added);
  EXPECT_EQ(p.providers, (std::vector<Provider>{Provider::GpuKretprobe, Provider::Uprobe}));
  const Probe &gpu = *p.program->probes[0], &hidden = *p.program->probes[1];
  EXPECT_FALSE(gpu.hidden);
  EXPECT_TRUE(hidden.hidden);
  EXPECT_EQ(hidden.attach_points[0].name(), "uprobe:cuda:cuLaunchKernel*");
  // Both uses (predicate and body) read the map, typed as the builtin; none is left.
  int reads = 0;
  for_each_expr(gpu, [&](const Expr &e) {
    EXPECT_FALSE(is_builtin(e, BuiltinId::LaunchCall));
    if (e.kind == ExprKind::Map && e.as<MapExpr>().name == kLaunchCallMap) {
      ++reads;
      EXPECT_EQ(e.type, Type::integer(8, false));
    }
  });
  EXPECT_EQ(reads, 2);
  // The hidden probe: @.launch_call = nsecs.
  bool writes = false;
  for_each_expr(hidden, [&](const Expr &e) {
    writes |= is_builtin(e, BuiltinId::Nsecs) && e.type == Type::integer(8, false);
  });
  EXPECT_TRUE(writes);
  const MapInfo &m = p.sema.maps.at(kLaunchCallMap);
  EXPECT_TRUE(m.internal);
  EXPECT_TRUE(m.key.is_none());
  EXPECT_FALSE(p.sema.maps.at("@c").internal);
}

TEST(PlaceLaunchProbes, LaunchCallStaysOnTheGpuWhereHeldOrBesideAnotherGpuProbe) {
  Placed held = run("gpu:kretprobe:k /last_thread/ { @c = launch_call; }", "not a -c run");
  EXPECT_NE(held.lines.find("runs on the GPU in every thread: stdin:1:1: not a -c run"),
            std::string::npos)
      << held.lines;
  EXPECT_TRUE(held.added);
  // One hidden probe however many probes read it.
  Placed two = run("gpu:kprobe:j { @n = launch_call; }\n"
                   "gpu:kretprobe:k /last_thread/ { @c = launch_call; }");
  EXPECT_EQ(two.providers, (std::vector<Provider>{Provider::GpuKprobe, Provider::GpuKretprobe,
                                                  Provider::Uprobe}));
  // No launch_call on the GPU: nothing added.
  Placed none = run("gpu:kprobe:j { @n = nsecs; }");
  EXPECT_FALSE(none.added);
  EXPECT_EQ(none.program->probes.size(), 1u);
}

} // namespace
} // namespace gpubt::frontend

