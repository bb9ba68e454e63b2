// gpubt's stdout leaves in whole lines: a -c program writing to the same pipe meanwhile must not
// land inside one of gpubt's lines (the GPU suite's kernelretsnoop case lost a line so once gpu
// printfs printed while the program ran).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

#include "driver/output_file.h"

namespace {

// What a pipe has received so far, without waiting.
std::string drain(int fd) {
  std::string got;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    got.append(buf, n);
  return got;
}

TEST(OutputFile, WritesLeaveInWholeLines) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_NONBLOCK), 0);
  int saved = ::dup(STDOUT_FILENO);
  ::dup2(p[1], STDOUT_FILENO);
  {
    auto out = gpubt::driver::OutputFile::open("");
    ASSERT_TRUE(out);
    std::string line(37, 'x');
    for (int i = 0; i < 600; ++i) // 22,800 bytes: past the buffer more than once
      (*out)->stream() << line << "\n";
    (*out)->stream() << "partial";
    std::string got = drain(p[0]);
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.back(), '\n');
    EXPECT_EQ(got.size() % 38, 0u);
    (*out)->stream().flush();
    std::string all;
    for (int i = 0; i < 600; ++i)
      all += line + "\n";
    EXPECT_EQ(got + drain(p[0]), all + "partial"); // the rest at the flush, nothing lost

  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(p[0]);
  ::close(p[1]);
}

} // namespace
