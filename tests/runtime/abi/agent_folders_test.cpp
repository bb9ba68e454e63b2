// Where agents listen and gpubt looks (issue 23): another user (nobody, a forked child that
// drops to it) makes the folder an agent would use first; the agent takes one of its own
// user's instead, and gpubt's search finds the socket there. Folders under a private root that
// stands for /tmp (mode 1777, as /tmp) and /run/user, so that no other test's agents are hurt.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/abi/agent_folders.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::abi {
namespace {

constexpr uid_t kNobody = 65534;

// Runs WHAT in a child that is user nobody; true when it returned true.
bool as_nobody(const std::function<bool()> &what) {
  pid_t child = fork();
  if (child == 0) {
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0)
      _exit(2);
    _exit(what() ? 0 : 1);
  }
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A listening socket at PATH (closed with the fd).
runtime::UniqueFd listen_at(const std::string &path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  runtime::UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
      listen(fd.get(), 1) != 0)
    return runtime::UniqueFd();
  return fd;
}

struct AgentFoldersTest : ::testing::Test {
  std::string base;
  AgentFolderRoots roots;
  uid_t me = geteuid();
  std::string first; // rule 1's folder
  void SetUp() override {
    if (me != 0)
      GTEST_SKIP() << "needs root: another user (nobody) plays the one making folders first";
    unsetenv("GPUBT_AGENT_DIR");
    char tmpl[] = "/tmp/gpubt-folders-test-XXXXXX";
    base = mkdtemp(tmpl);
    chmod(base.c_str(), 0755);
    roots.tmp = base + "/tmp";
    roots.run_user = base + "/run-user";
    mkdir(roots.tmp.c_str(), 0777);
    chmod(roots.tmp.c_str(), 01777); // as /tmp: anyone makes folders, no one removes others'
    mkdir(roots.run_user.c_str(), 0755);
    first = roots.tmp + "/gpubt-agent-" + std::to_string(me);
  }
  void TearDown() override {
    if (!base.empty())
      std::system(("rm -rf " + base).c_str());
  }
  bool nobody_makes_first(mode_t mode) {
    return as_nobody([&] { return mkdir(first.c_str(), mode) == 0 && chmod(first.c_str(), mode) == 0; });
  }
  std::string socket_in(const std::string &dir) { return dir + "/" + std::to_string(getpid()) + ".sock"; }
  // An agent's socket in DIR is what gpubt's search finds for this process, as this user's.
  void expect_found_in(const std::string &dir) {
    auto sock = listen_at(socket_in(dir));
    ASSERT_TRUE(sock.valid());
    auto found = find_agent_sockets(getpid(), roots);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, socket_in(dir));
    EXPECT_EQ(found[0].uid, me);
  }
};

TEST_F(AgentFoldersTest, FirstChoiceIsTmpFolderMadePrivate) {
  auto dir = choose_agent_dir(roots);
  ASSERT_TRUE(dir) << dir.error();
  EXPECT_EQ(*dir, first);
  struct stat st;
  ASSERT_EQ(lstat(first.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(AgentFoldersTest, FolderAnotherUserMadeFirstTakesTheAgentToTheRuntimeFolder) {
  ASSERT_TRUE(nobody_makes_first(0700));
  std::string runtime_dir = roots.run_user + "/" + std::to_string(me);
  ASSERT_EQ(mkdir(runtime_dir.c_str(), 0700), 0);
  auto dir = choose_agent_dir(roots);
  ASSERT_TRUE(dir) << dir.error();
  EXPECT_EQ(*dir, runtime_dir + "/gpubt-agent");
  expect_found_in(*dir);
}

TEST_F(AgentFoldersTest, WithoutARuntimeFolderAPrivateTmpFolderIsMadeAndKept) {
  // nobody's folder is open to all (as if made to catch sockets): passed over too.
  ASSERT_TRUE(nobody_makes_first(0777));
  // A folder of nobody's shaped like rule 3's is not ours: never chosen.
  std::string decoy = first + ".aaaaaa";
  ASSERT_TRUE(as_nobody([&] { return mkdir(decoy.c_str(), 0700) == 0; }));
  auto dir = choose_agent_dir(roots);
  ASSERT_TRUE(dir) << dir.error();
  EXPECT_EQ(dir->rfind(first + ".", 0), 0u) << *dir;
  EXPECT_NE(*dir, decoy);
  struct stat st;
  ASSERT_EQ(lstat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, me);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto again = choose_agent_dir(roots); // the next process of this user: the same folder
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *dir);
  expect_found_in(*dir);
}

TEST_F(AgentFoldersTest, SocketsInAnotherUsersFolderAreListedAsTheirs) {
  // nobody names a socket after this process in its own folder of rule 3's shape: found, but
  // with nobody's uid, which the caller (agent_peer.h) refuses for a process of root's.
  std::string theirs = roots.tmp + "/gpubt-agent-" + std::to_string(kNobody) + ".bbbbbb";
  std::string path = socket_in(theirs);
  ASSERT_TRUE(as_nobody([&] { return mkdir(theirs.c_str(), 0700) == 0 && listen_at(path).valid(); }));
  auto found = find_agent_sockets(getpid(), roots);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].uid, kNobody);
}

TEST_F(AgentFoldersTest, AgentDirIsTheOnlyFolderWhenSet) {
  std::string dir = base + "/chosen";
  setenv("GPUBT_AGENT_DIR", dir.c_str(), 1);
  auto got = choose_agent_dir(roots);
  unsetenv("GPUBT_AGENT_DIR");
  ASSERT_TRUE(got) << got.error();
  EXPECT_EQ(*got, dir);
}

} // namespace
} // namespace gpubt::abi
