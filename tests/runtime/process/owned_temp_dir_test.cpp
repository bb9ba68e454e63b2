// Owned temporary folders: the start-up sweep removes only those whose gpubt is gone.
#include "runtime/process/owned_temp_dir.h"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

using namespace gpubt::runtime;
namespace fs = std::filesystem;

namespace {

const std::string kPrefix = "gpubt-owned-test-" + std::to_string(getpid()) + "-";

std::string plain_dir(bool with_lock, bool old) {
  std::string tmpl = "/tmp/" + kPrefix + "XXXXXX";
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  if (with_lock)
    close(open((tmpl + "/.owner.lock").c_str(), O_CREAT | O_WRONLY, 0600));
  close(open((tmpl + "/results.bin").c_str(), O_CREAT | O_WRONLY, 0600));
  if (old) {
    utimbuf two_hours_ago{time(nullptr) - 7200, time(nullptr) - 7200};
    utime(tmpl.c_str(), &two_hours_ago);
  }
  return tmpl;
}

} // namespace

TEST(OwnedTempDir, SweepRemovesOnlyAbandonedFolders) {
  auto live = make_owned_temp_dir(kPrefix);
  ASSERT_TRUE(live.ok()) << live.error();
  struct stat st {};
  ASSERT_EQ(stat(live->path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string dead = plain_dir(true, false);    // its gpubt was killed: the lock is free
  std::string fresh = plain_dir(false, false);  // no lock yet: may be a gpubt starting up
  std::string ancient = plain_dir(false, true); // no lock, two hours old: an older gpubt's
  EXPECT_EQ(remove_abandoned_temp_dirs(kPrefix), 2);
  EXPECT_TRUE(fs::exists(live->path));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(ancient));
  live->lock.reset(); // gpubt gone
  EXPECT_EQ(remove_abandoned_temp_dirs(kPrefix), 1);
  EXPECT_FALSE(fs::exists(live->path));
  fs::remove_all(fresh);
}
