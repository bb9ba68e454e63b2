// Where each gpu probe runs (issue 25): the launch-level test, one rule a case, with the reason
// -v and --dry-run print for a probe that stays on the GPU.
#include <gtest/gtest.h>

#include "frontend/parse/parse.h"
#include "frontend/passes/place_launch_probes.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {
namespace {

// The placement lines, one per gpu probe, and the providers after the pass; ERRORS:
// check_launch_only_builtins's, rendered.
std::string place(const std::string &text, std::vector<Provider> *providers = nullptr,
                  const std::string &held = "", std::string *errors = nullptr) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto program = parse_program(file, diags);
  if (!program || diags.has_errors())
    return "PARSE FAILED";
  resolve_types(*program, {});
  std::string out;
  auto placed = place_launch_probes(*program, held);
  for (const auto &p : placed)
    out += placement_line(p, "stdin") + "\n";
  Diagnostics found;
  check_launch_only_builtins(*program, placed, found);
  if (errors)
    *errors = found.render(file);
  for (const auto &probe : program->probes)
    if (providers)
      providers->push_back(probe->attach_points[0].provider);
  return out;
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

// launch_call (CUPTI's queued time) is a launch-level value: read with others, the probe moves;
// where the probe stays on the GPU (a thread's value, held, another gpu probe) it is an error at
// its use that says why the probe stays.
TEST(PlaceLaunchProbes, LaunchCallMovesWithTheProbeAndIsAnErrorWhereItStays) {
  std::string errors;
  std::vector<Provider> providers;
  EXPECT_TRUE(per_launch(place("gpu:kretprobe:* /last_thread && launch_call != 0/ { "
                               "@us[kernel] = hist((launch_start - launch_call) / 1000); }",
                               &providers, "", &errors)));
  EXPECT_EQ(providers, std::vector<Provider>{Provider::GpuLaunch});
  EXPECT_EQ(errors, "");

  place("gpu:kretprobe:k /last_thread/ { @t[tid] = count(); @c = launch_call; }", nullptr, "",
        &errors);
  EXPECT_EQ(errors, "stdin:1:57-68: ERROR: launch_call (the host's launch call time) is known "
                    "only to a probe gpubt runs on the host once per finished launch; "
                    "gpu:kretprobe:k runs on the GPU (line 1: reads tid, a value of each thread)\n"
                    "gpu:kretprobe:k /last_thread/ { @t[tid] = count(); @c = launch_call; }\n"
                    "                                                        ~~~~~~~~~~~\n");
  place("gpu:kretprobe:k /last_thread/ { @c = launch_call; }", nullptr, "not a -c run", &errors);
  EXPECT_NE(errors.find("runs on the GPU (line 1: not a -c run)"), std::string::npos) << errors;
  // The other gpu probe reads no launch_call: only the kept kretprobe's use is blamed.
  place("gpu:kprobe:j { @n = count(); }\ngpu:kretprobe:k /last_thread/ { @c = launch_call; }",
        nullptr, "", &errors);
  EXPECT_NE(errors.find("stdin:2:38-49: ERROR: launch_call"), std::string::npos) << errors;
  EXPECT_NE(errors.find("another gpu probe stays on the GPU (gpu:kprobe:j)"), std::string::npos)
      << errors;
}

} // namespace
} // namespace gpubt::frontend

