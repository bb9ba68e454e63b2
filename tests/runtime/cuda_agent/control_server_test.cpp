// The dormant agent's control socket, for real: a ControlServer in this process, gpubt's side
// played with the same frames, another user played by a forked child that drops to nobody.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "runtime/abi/agent_control.h"
#include "runtime/cuda_agent/control_server.h"
#include "tests/support/fd_limit_filler.h"

using namespace gpubt;
using gpubt::abi::Frame;

namespace {

runtime::UniqueFd connect_to(const std::string &path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  runtime::UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
    return runtime::UniqueFd();
  return fd;
}

// Connects to PATH and sends Attach; the answer (an error when none came).
Result<gpubt::abi::ControlFrame> attach_at(const std::string &path, runtime::UniqueFd &conn) {
  conn = connect_to(path);
  if (!conn.valid())
    return make_error("cannot connect to " + path);
  if (auto st = gpubt::abi::send_frame(conn.get(), Frame::Attach, gpubt::abi::pack_blobs({"x"}));
      !st)
    return make_error(st.error());
  return gpubt::abi::recv_frame(conn.get(), 5000);
}

struct ControlServerTest : ::testing::Test {
  std::string dir;
  std::atomic<int> attaches{0}, detaches{0};
  std::string config_seen;
  void SetUp() override {
    char tmpl[] = "/tmp/gpubt-control-test-XXXXXX";
    dir = mkdtemp(tmpl);
    setenv("GPUBT_AGENT_DIR", dir.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("GPUBT_AGENT_DIR");
    std::system(("rm -rf " + dir).c_str());
  }
  std::unique_ptr<agent::ControlServer> start(const gpubt::abi::AgentFolderRoots &roots = {}) {
    agent::ControlServer::Handler h;
    h.attach = [this](std::vector<std::string> blobs, std::vector<int> fds) -> Result<std::string> {
      for (int fd : fds)
        close(fd);
      ++attaches;
      config_seen = blobs.empty() ? "" : blobs[0];
      if (config_seen == "refuse me")
        return make_error("no thanks");
      return std::string("attached fine");
    };
    h.detach = [this] {
      ++detaches;
      return std::string("the results");
    };
    auto s = agent::ControlServer::start(h, roots);
    EXPECT_TRUE(s) << (s ? "" : s.error());
    return s ? std::move(*s) : nullptr;
  }
};

TEST(AgentControl, FramesCarryBytesAndFds) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  std::string big(300000, 'x'); // more than the socket holds: sent while it is read
  std::thread sender([&] {
    EXPECT_TRUE(gpubt::abi::send_frame(sv[0], Frame::Attach,
                                       gpubt::abi::pack_blobs({"cfg", big}), {pipefd[1]}));
  });
  auto f = gpubt::abi::recv_frame(sv[1], 5000);
  sender.join();
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->type, Frame::Attach);
  ASSERT_EQ(f->fds.size(), 1u);
  ASSERT_EQ(write(f->fds[0], "y", 1), 1); // the received fd is the pipe's write end
  char c = 0;
  ASSERT_EQ(read(pipefd[0], &c, 1), 1);
  EXPECT_EQ(c, 'y');
  auto blobs = gpubt::abi::unpack_blobs(f->bytes);
  ASSERT_TRUE(blobs);
  ASSERT_EQ(blobs->size(), 2u);
  EXPECT_EQ((*blobs)[1], big);
  EXPECT_FALSE(gpubt::abi::unpack_blobs(std::string("\x05\0\0\0\0\0\0\0ab", 10)));
  close(sv[0]);
  auto eof = gpubt::abi::recv_frame(sv[1], 1000);
  ASSERT_FALSE(eof);
  EXPECT_EQ(eof.error(), "closed");
  for (int fd : {sv[1], pipefd[0], pipefd[1], f->fds[0]})
    close(fd);
}

TEST_F(ControlServerTest, PrivateDirRefusesAFolderOthersMayWrite) {
  std::string open_dir = dir + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0777), 0);
  chmod(open_dir.c_str(), 0777);
  auto st = gpubt::abi::make_private_dir(open_dir);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("only it may write"), std::string::npos);
  EXPECT_TRUE(gpubt::abi::make_private_dir(dir + "/mine"));
  struct stat s;
  ASSERT_EQ(stat((dir + "/mine").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);
}

TEST_F(ControlServerTest, AttachDetachAndASecondSessionIsRefused) {
  auto server = start();
  ASSERT_TRUE(server);
  struct stat st;
  ASSERT_EQ(stat(server->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto found = gpubt::abi::find_agent_sockets(getpid());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, server->path());

  auto one = connect_to(server->path());
  ASSERT_TRUE(one.valid());
  ASSERT_TRUE(gpubt::abi::send_frame(one.get(), Frame::Attach, gpubt::abi::pack_blobs({"config text"})));
  auto answer = gpubt::abi::recv_frame(one.get(), 5000);
  ASSERT_TRUE(answer) << answer.error();
  EXPECT_EQ(answer->type, Frame::Attached);
  EXPECT_EQ(answer->bytes, "attached fine");
  EXPECT_EQ(config_seen, "config text");
  EXPECT_TRUE(server->send_events("records"));
  auto events = gpubt::abi::recv_frame(one.get(), 5000);
  ASSERT_TRUE(events);
  EXPECT_EQ(events->type, Frame::Events);

  auto two = connect_to(server->path());
  ASSERT_TRUE(two.valid());
  auto busy = gpubt::abi::recv_frame(two.get(), 5000);
  ASSERT_TRUE(busy) << busy.error();
  EXPECT_EQ(busy->type, Frame::Refused);
  EXPECT_NE(busy->bytes.find("busy"), std::string::npos) << busy->bytes;

  ASSERT_TRUE(gpubt::abi::send_frame(one.get(), Frame::Detach, ""));
  auto results = gpubt::abi::recv_frame(one.get(), 5000);
  ASSERT_TRUE(results) << results.error();
  EXPECT_EQ(results->type, Frame::Results);
  EXPECT_EQ(results->bytes, "the results");
  EXPECT_EQ(detaches, 1);
  EXPECT_FALSE(server->send_events("late")); // nobody attached now
}

TEST_F(ControlServerTest, GpubtGoneDetachesAndARefusedAttachSaysWhy) {
  auto server = start();
  ASSERT_TRUE(server);
  {
    auto one = connect_to(server->path());
    ASSERT_TRUE(gpubt::abi::send_frame(one.get(), Frame::Attach, gpubt::abi::pack_blobs({"x"})));
    ASSERT_TRUE(gpubt::abi::recv_frame(one.get(), 5000));
  } // closed: as if gpubt were killed
  for (int i = 0; i < 200 && detaches == 0; ++i)
    usleep(10000);
  EXPECT_EQ(detaches, 1);
  auto again = connect_to(server->path());
  ASSERT_TRUE(gpubt::abi::send_frame(again.get(), Frame::Attach, gpubt::abi::pack_blobs({"refuse me"})));
  auto no = gpubt::abi::recv_frame(again.get(), 5000);
  ASSERT_TRUE(no);
  EXPECT_EQ(no->type, Frame::Refused);
  EXPECT_EQ(no->bytes, "no thanks");
}

TEST_F(ControlServerTest, AnotherUserIsRefusedByItsCredentials) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to play another user";
  auto server = start();
  ASSERT_TRUE(server);
  // Past the folder's mode (0700 keeps others out already), the peer check still refuses.
  chmod(dir.c_str(), 0711);
  chmod(server->path().c_str(), 0666);
  pid_t child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(2);
    auto fd = connect_to(server->path());
    if (!fd.valid())
      _exit(3);
    (void)gpubt::abi::send_frame(fd.get(), Frame::Attach, gpubt::abi::pack_blobs({"x"}));
    auto f = gpubt::abi::recv_frame(fd.get(), 5000);
    bool refused = f && f->type == Frame::Refused &&
                   f->bytes.find("permission denied") != std::string::npos;
    _exit(refused ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(attaches, 0);
}

} // namespace

// gpubt stops reading (suspended with Ctrl-Z, stopped in a debugger) while the program's
// threads send it printf records: a send must end (the session with it) and never hold the
// program's thread, which waited for ever before.
TEST_F(ControlServerTest, GpubtThatStopsReadingDoesNotStopTheProgram) {
  auto server = start();
  ASSERT_TRUE(server);
  auto one = connect_to(server->path());
  ASSERT_TRUE(one.valid());
  ASSERT_TRUE(gpubt::abi::send_frame(one.get(), Frame::Attach, gpubt::abi::pack_blobs({"x"})));
  auto answer = gpubt::abi::recv_frame(one.get(), 5000);
  ASSERT_TRUE(answer) << answer.error();
  std::atomic<bool> returned{false};
  std::thread program([&] { // one launch's records after another, as on_launch_end sends them
    std::string records(size_t(1) << 16, 'r');
    while (server->send_events(records)) {
    }
    returned = true;
  });
  for (int i = 0; i < 6000 && !returned; ++i) // 60 s: far past the send deadline
    usleep(10000);
  EXPECT_TRUE(returned) << "the program's thread is still blocked in send_events";
  if (!returned)
    shutdown(one.get(), SHUT_RDWR); // lets it go, so that the test can end
  program.join();
  for (int i = 0; i < 6000 && detaches == 0; ++i)
    usleep(10000);
  EXPECT_EQ(detaches, 1); // the session ended: the agent detached by itself
}

// Issue 23: anyone may make /tmp/gpubt-agent-UID before the user's first agent does (here
// nobody, in a folder standing for /tmp). The agent used to refuse it and take no attach
// requests at all; now it listens in a folder of its own user's, where gpubt's search finds it.
TEST_F(ControlServerTest, FolderAnotherUserMadeFirstDoesNotStopTheAgentListening) {
  unsetenv("GPUBT_AGENT_DIR");
  gpubt::abi::AgentFolderRoots roots{dir + "/tmp", dir + "/run-user"};
  chmod(dir.c_str(), 0755);
  ASSERT_EQ(mkdir(roots.tmp.c_str(), 0777), 0);
  chmod(roots.tmp.c_str(), 01777);
  std::string taken = roots.tmp + "/gpubt-agent-" + std::to_string(geteuid());
  pid_t child = fork();
  if (child == 0)
    _exit(setgid(65534) == 0 && setuid(65534) == 0 && mkdir(taken.c_str(), 0700) == 0 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto server = start(roots);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->path().rfind(taken + ".", 0), 0u) << server->path();
  auto found = gpubt::abi::find_agent_sockets(getpid(), roots);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, server->path());
  runtime::UniqueFd one;
  auto answer = attach_at(server->path(), one);
  ASSERT_TRUE(answer) << answer.error();
  EXPECT_EQ(answer->type, Frame::Attached);
}

// Issue 23 review: at the open-file limit the control thread's accept failed (EMFILE) and it
// polled again at once, the listener still readable: a CPU of the traced program's host spun
// for as long as the limit lasted. Now the waiting gpubt is turned away (its connection closed)
// and the thread idles; with descriptors free again, gpubt attaches as before.
TEST_F(ControlServerTest, AtTheOpenFileLimitAWaitingGpubtIsTurnedAwayWithoutSpinning) {
  auto server = start();
  ASSERT_TRUE(server);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, server->path().c_str());
  runtime::UniqueFd waiting(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)); // before the limit
  gpubt::test::FdLimitFiller limit;
  ASSERT_TRUE(limit.ok());
  ASSERT_EQ(connect(waiting.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  double cpu0 = gpubt::test::cpu_seconds();
  auto closed = gpubt::abi::recv_frame(waiting.get(), 5000);
  usleep(500000); // what the control thread does meanwhile: nothing
  double spent = gpubt::test::cpu_seconds() - cpu0;
  limit.release();
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error(), "closed") << "the gpubt waiting at the limit was left waiting";
  EXPECT_LT(spent, 0.25) << "CPU seconds the process spent at the limit";
  runtime::UniqueFd one;
  auto answer = attach_at(server->path(), one);
  ASSERT_TRUE(answer) << answer.error();
  EXPECT_EQ(answer->type, Frame::Attached);
}
