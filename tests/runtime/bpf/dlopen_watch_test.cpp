// The load watch against the real kernel and ld.so: a -c child that dlopens a library stops once
// it is mapped, and the helpers that find it.
#include "runtime/process/binary_paths.h"
#include "runtime/process/child_process.h"
#include "runtime/bpf/dlopen_watch.h"
#include <csignal>
#include <fstream>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

using namespace gpubt::runtime;

namespace {

const std::string programs = GPUBT_BINARY_DIR "/tests/programs";

TEST(DlopenWatch, ProgramInterpreter) {
  std::string interp = program_interpreter("/bin/true");
  EXPECT_NE(interp.find("ld-linux"), std::string::npos) << interp;
  EXPECT_EQ(access(interp.c_str(), R_OK), 0);
  std::string script = testing::TempDir() + "/gpubt_script.sh";
  std::ofstream(script) << "#!/bin/sh\n";
  EXPECT_EQ(program_interpreter(script), "");
  EXPECT_EQ(program_interpreter("/nonexistent"), "");
}

TEST(DlopenWatch, MappedFilesWithPrefix) {
  auto libc = mapped_files_with_prefix(getpid(), "libc.so");
  ASSERT_EQ(libc.size(), 1u);
  EXPECT_NE(libc[0].find("/libc.so"), std::string::npos) << libc[0];
  EXPECT_TRUE(mapped_files_with_prefix(getpid(), "libnosuchlib.so").empty());
  EXPECT_STREQ(gpu_library_prefix("cudart"), "libcudart.so");
  EXPECT_STREQ(gpu_library_prefix("hip"), "libamdhip64.so");
  EXPECT_EQ(gpu_library_prefix("libc"), nullptr);
}

// Each stop is let go at once; one of them comes with the dlopened library mapped, and the
// program still runs to its end.
TEST(DlopenWatch, StopsTheProcessWithTheLibraryMapped) {
  std::string lib = programs + "/fake-cudart/libfake_torch.so";
  auto child = ChildProcess::spawn(programs + "/dlopen_calls " + lib + " torch_alloc 2");
  ASSERT_TRUE(child.ok()) << child.error();
  auto &c = **child;
  auto watch = LoadWatch::start(c.pid(), c.path());
  ASSERT_TRUE(watch.ok()) << watch.error();
  ASSERT_TRUE(c.start().ok());
  int stops = 0, stops_with_cudart = 0;
  for (int i = 0; i < 100 && !c.exited(); ++i) {
    pollfd p{(*watch)->epoll_fd(), POLLIN, 0};
    poll(&p, 1, 50);
    if (!(*watch)->take_loads())
      continue;
    ASSERT_TRUE(wait_until_stopped(c.pid(), 1000));
    ++stops;
    stops_with_cudart += !mapped_files_with_prefix(c.pid(), "libcudart.so").empty();
    kill(c.pid(), SIGCONT);
  }
  EXPECT_TRUE(c.exited());
  EXPECT_EQ(WEXITSTATUS(c.exit_status()), 0);
  EXPECT_GE(stops, 2);              // the program's start, then the dlopen
  EXPECT_GE(stops_with_cudart, 1); // mapped by the dlopen (as libfake_torch's dependency)
}

} // namespace
