// last_thread across probes: one gpu probe with one attach point may count a launch's threads.
#include <gtest/gtest.h>

#include "frontend/parse/parse.h"
#include "frontend/passes/launch_state.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {
namespace {

std::string check(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto program = parse_program(file, diags);
  if (!program || diags.has_errors())
    return "PARSE FAILED";
  resolve_types(*program, {});
  check_launch_state(*program, diags);
  return diags.render(file);
}

TEST(LaunchState, OneCountingProbe) {
  EXPECT_EQ(check("gpu:kretprobe:k /last_thread/ { @ = count(); }"), "");
  // Other probes may read launch_start, and host probes have no last_thread to count.
  EXPECT_EQ(check("gpu:kretprobe:k /last_thread/ { @ = count(); } "
                  "gpu:kretprobe:j { @s = min(launch_start); }"),
            "");
}

TEST(LaunchState, ASecondCountIsRefusedWhereItIs) {
  std::string two = check("gpu:kretprobe:a { @x = last_thread; } "
                          "gpu:kretprobe:b { @y = last_thread; }");
  EXPECT_NE(two.find("stdin:1:62-73: ERROR: last_thread can be used in one gpu probe"),
            std::string::npos)
      << two;
  std::string points = check("gpu:kretprobe:a,gpu:kretprobe:b { @x = last_thread; }");
  EXPECT_NE(points.find("stdin:1:40-51: ERROR:"), std::string::npos) << points;
}

} // namespace
} // namespace gpubt::frontend
