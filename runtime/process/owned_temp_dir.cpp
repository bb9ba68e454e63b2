// Temporary folders with an owner lock, and the start-up sweep of abandoned ones.
#include "runtime/process/owned_temp_dir.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

constexpr const char *kLockName = ".owner.lock";

bool abandoned(const std::string &dir, const struct stat &st) {
  int fd = ::open((dir + "/" + kLockName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ENOENT && std::time(nullptr) - st.st_mtime > 3600;
  bool free = flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

} // namespace

Result<OwnedTempDir> make_owned_temp_dir(const std::string &prefix) {
  std::string tmpl = "/tmp/" + prefix + "XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return make_error(std::string("cannot create a temporary folder: ") + strerror(errno));
  OwnedTempDir dir{tmpl, UniqueFd(::open((tmpl + "/" + kLockName).c_str(),
                                         O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600))};
  if (dir.lock.get() < 0 || flock(dir.lock.get(), LOCK_EX | LOCK_NB) < 0) {
    std::string why = strerror(errno);
    std::error_code ec;
    std::filesystem::remove_all(tmpl, ec);
    return make_error("cannot lock the temporary folder " + tmpl + ": " + why);
  }
  return dir;
}

int remove_abandoned_temp_dirs(const std::string &prefix, const std::string &root) {
  DIR *d = opendir(root.c_str());
  if (!d)
    return 0;
  int removed = 0;
  while (auto *e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0)
      continue;
    std::string dir = root + "/" + e->d_name;
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (!abandoned(dir, st))
      continue;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    removed += !ec;
  }
  closedir(d);
  return removed;
}

} // namespace gpubt::runtime
