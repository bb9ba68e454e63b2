// Where agents listen and where gpubt looks (see agent_folders.h).
#include "runtime/abi/agent_folders.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubt::abi {
namespace {

const char *env_dir() {
  const char *dir = std::getenv("GPUBT_AGENT_DIR");
  return dir && *dir ? dir : nullptr;
}

// A folder itself (not a link) owned by UID that no one else may write to.
bool trusted_dir(const std::string &dir, uid_t uid) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
         !(st.st_mode & 022);
}

std::string tmp_dir(const AgentFolderRoots &roots, uid_t uid) {
  return roots.tmp + "/gpubt-agent-" + std::to_string(uid);
}

std::string run_user_dir(const AgentFolderRoots &roots, uid_t uid) {
  return roots.run_user + "/" + std::to_string(uid);
}

// The names in DIR that pass KEEP, sorted (readdir's order is the file system's).
template <class Keep> std::vector<std::string> names_in(const std::string &dir, Keep keep) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (keep(std::string(e->d_name)))
        names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Rule 3: a /tmp/gpubt-agent-UID.XXXXXX of this user's, else a new one.
Result<std::string> private_tmp_dir(const AgentFolderRoots &roots, uid_t uid) {
  std::string prefix = "gpubt-agent-" + std::to_string(uid) + ".";
  for (const auto &name : names_in(roots.tmp, [&](const std::string &n) {
         return n.rfind(prefix, 0) == 0;
       }))
    if (trusted_dir(roots.tmp + "/" + name, uid))
      return roots.tmp + "/" + name;
  std::string path = roots.tmp + "/" + prefix + "XXXXXX";
  if (!mkdtemp(path.data()))
    return make_error("cannot make " + path + ": " + strerror(errno));
  return path;
}

} // namespace

Status make_private_dir(const std::string &dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error("cannot make " + dir + ": " + strerror(errno));
  if (!trusted_dir(dir, geteuid()))
    return make_error(dir + " is not a folder of this user's that only it may write to");
  return Ok{};
}

Result<std::string> choose_agent_dir(const AgentFolderRoots &roots) {
  if (const char *dir = env_dir()) {
    if (auto st = make_private_dir(dir); !st)
      return make_error(st.error());
    return std::string(dir);
  }
  uid_t uid = geteuid();
  auto first = make_private_dir(tmp_dir(roots, uid));
  if (first)
    return tmp_dir(roots, uid);
  if (trusted_dir(run_user_dir(roots, uid), uid)) {
    std::string dir = run_user_dir(roots, uid) + "/gpubt-agent";
    if (make_private_dir(dir))
      return dir;
  }
  auto last = private_tmp_dir(roots, uid);
  if (!last)
    return make_error(first.error() + "; " + last.error());
  return last;
}

std::string agent_dirs_text(uid_t uid, const AgentFolderRoots &roots) {
  if (const char *dir = env_dir())
    return dir;
  return tmp_dir(roots, uid) + ", " + run_user_dir(roots, uid) + "/gpubt-agent or " +
         tmp_dir(roots, uid) + ".*";
}

std::vector<AgentSocket> find_agent_sockets(pid_t pid, const AgentFolderRoots &roots) {
  std::vector<std::string> dirs;
  if (const char *dir = env_dir()) {
    dirs.push_back(dir);
  } else {
    for (const auto &name : names_in(roots.tmp, [](const std::string &n) {
           return n.rfind("gpubt-agent-", 0) == 0;
         }))
      dirs.push_back(roots.tmp + "/" + name);
    for (const auto &name : names_in(roots.run_user, [](const std::string &n) {
           return !n.empty() && n.find_first_not_of("0123456789") == std::string::npos;
         }))
      dirs.push_back(roots.run_user + "/" + name + "/gpubt-agent");
  }
  std::vector<AgentSocket> found;
  for (const auto &dir : dirs) {
    // Opened without following a link, then checked: what is read is what was checked.
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat ds;
    if (fd < 0)
      continue;
    if (fstat(fd, &ds) != 0 || !S_ISDIR(ds.st_mode) || (ds.st_mode & 022)) {
      close(fd);
      continue;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
      close(fd);
      continue;
    }
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      size_t dot = name.find(".sock");
      // A pid: at most 7 digits (pid_max is at most 2^22), so that no name wraps to another pid.
      if (dot == std::string::npos || dot + 5 != name.size() || dot == 0 || dot > 7 ||
          name.find_first_not_of("0123456789") != dot)
        continue;
      pid_t p = pid_t(std::atol(name.c_str()));
      if (pid > 0 && p != pid)
        continue;
      found.push_back({p, ds.st_uid, dir + "/" + name});
    }
    closedir(d);
  }
  return found;
}

} // namespace gpubt::abi
