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

TEST(LaunchState, OneBlockProbeOfEachKindOnOnePattern) {
  EXPECT_EQ(check("gpu:block_begin:k { @b = count(); } gpu:block_end:k { @e = count(); }"), "");
  EXPECT_EQ(check("gpu:block_end:k* { @e = count(); } gpu:kprobe:j { @n = count(); }"), "");
  EXPECT_EQ(check("gpu:block_begin:a { @b = count(); } gpu:block_begin:b { @c = count(); }"),
            "stdin:1:37-54: ERROR: gpu:block_begin:b: a script may have one gpu:block_begin "
            "probe (with one attach point): each would claim the block's state again\n"
            "gpu:block_begin:a { @b = count(); } gpu:block_begin:b { @c = count(); }\n"
            "                                    ~~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(check("gpu:block_begin:a { @b = count(); } gpu:block_end:b { @c = count(); }"),
            "stdin:1:37-52: ERROR: gpu:block_begin and gpu:block_end must name one kernel "
            "pattern, here 'a': a kernel that both patterns match would count its blocks twice\n"
            "gpu:block_begin:a { @b = count(); } gpu:block_end:b { @c = count(); }\n"
            "                                    ~~~~~~~~~~~~~~~\n");
}

} // namespace
} // namespace gpubt::frontend
