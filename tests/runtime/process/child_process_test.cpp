// -c command splitting and spawning.
#include "runtime/process/child_process.h"
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

using namespace gpubt::runtime;

TEST(ChildProcess, SplitCommand) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_command("  ls   -l /tmp "), (V{"ls", "-l", "/tmp"}));
  EXPECT_EQ(split_command("echo 'a b' \"c \\\"d\\\"\" e\\ f"),
            (V{"echo", "a b", "c \"d\"", "e f"}));
  EXPECT_EQ(split_command("x ''"), (V{"x", ""}));
}

TEST(ChildProcess, MissingCommand) {
  auto c = ChildProcess::spawn("/nonexist/x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), "Failed to fork child: path '/nonexist/x' does not exist or is not "
                       "executable");
  auto d = ChildProcess::spawn("nonexistcmd arg");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "Failed to fork child: path 'nonexistcmd' does not exist or is not "
                       "executable");
}

TEST(ChildProcess, HeldUntilStarted) {
  auto c = ChildProcess::spawn("sh -c 'exit 3'");
  ASSERT_TRUE(c.ok()) << c.error();
  auto &child = **c;
  pollfd p{child.pidfd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 100), 0); // still waiting for start()
  ASSERT_TRUE(child.start().ok());
  EXPECT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_TRUE(child.exited());
  EXPECT_EQ(WEXITSTATUS(child.exit_status()), 3);
  EXPECT_NE(child.path().find("/sh"), std::string::npos);
}

TEST(ChildProcess, NeverStartedChildGoesAway) {
  int pid;
  {
    auto c = ChildProcess::spawn("sleep 100");
    ASSERT_TRUE(c.ok());
    pid = (*c)->pid();
  }
  EXPECT_NE(kill(pid, 0), 0);
}

TEST(ChildProcess, ExecedOnceRunningTheCommand) {
  auto c = ChildProcess::spawn("sleep 0.5");
  ASSERT_TRUE(c.ok());
  auto &child = **c;
  EXPECT_FALSE(child.execed());
  ASSERT_TRUE(child.start().ok());
  for (int i = 0; i < 200 && !child.execed(); ++i)
    usleep(5000);
  EXPECT_TRUE(child.execed());
}
