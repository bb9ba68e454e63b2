// -l listing of tracepoints and of a binary's functions.
#include "runtime/bpf/list_probes.h"
#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

using namespace gpubt::runtime;

TEST(ListProbes, UprobeFunctions) {
  const std::string calls = GPUBT_BINARY_DIR "/tests/programs/calls";
  std::ostringstream out;
  ASSERT_TRUE(list_probes("uprobe:" + calls + ":*", out).ok());
  EXPECT_NE(out.str().find("uprobe:" + calls + ":add\n"), std::string::npos) << out.str();
  std::ostringstream one;
  ASSERT_TRUE(list_probes("uprobe:" + calls + ":gr*", one).ok());
  EXPECT_EQ(one.str(), "uprobe:" + calls + ":greet\n");
}

TEST(ListProbes, Tracepoints) {
  std::ostringstream out;
  ASSERT_TRUE(list_probes("tracepoint:sched:sched_process_e*", out).ok());
  EXPECT_EQ(out.str(),
            "tracepoint:sched:sched_process_exec\ntracepoint:sched:sched_process_exit\n");
  std::ostringstream bare;
  ASSERT_TRUE(list_probes("*sched_process_ex*", bare).ok());
  EXPECT_EQ(bare.str(), out.str());
  std::ostringstream all;
  ASSERT_TRUE(list_probes("", all).ok());
  std::string text = all.str();
  EXPECT_GT(std::count(text.begin(), text.end(), '\n'), 100);
}

TEST(ListProbes, MissingBinary) {
  std::ostringstream out;
  auto st = list_probes("uprobe:/nonexist/x:*", out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), "uprobe target file '/nonexist/x' does not exist or is not executable");
}
