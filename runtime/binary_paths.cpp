// Library and executable lookup for uprobe targets and -c commands.
#include "runtime/binary_paths.h"
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpubt::runtime {
namespace {

bool is_regular_file(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string basename_of(const std::string &p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// "libc" matches libc.so.6 and libc-2.31.so; "libc.so.6" matches only itself.
bool lib_name_matches(const std::string &want, const std::string &file) {
  if (file == want)
    return true;
  auto starts = [&](const std::string &pre) { return file.rfind(pre, 0) == 0; };
  if (want.find(".so") != std::string::npos)
    return false;
  return starts(want + ".so") || starts(want + "-") || starts("lib" + want + ".so");
}

std::string find_in_proc_maps(const std::string &name, int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    std::string path = line.substr(slash);
    if (lib_name_matches(name, basename_of(path)))
      return path;
  }
  return "";
}

// `ldconfig -p` lines: "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6".
std::string find_in_ld_cache(const std::string &name) {
  FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
  if (!p)
    return "";
  std::string found;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) {
    std::string line(buf.data());
    auto arrow = line.find(" => ");
    if (arrow == std::string::npos)
      continue;
    std::istringstream ss(line);
    std::string soname;
    ss >> soname;
    std::string path = line.substr(arrow + 4);
    while (!path.empty() && (path.back() == '\n' || path.back() == ' '))
      path.pop_back();
    if (!lib_name_matches(name, soname))
      continue;
    bool native =
        line.find("x86-64") != std::string::npos || line.find("AArch64") != std::string::npos;
    if (found.empty() || native)
      found = path;
    if (native)
      break;
  }
  pclose(p);
  return found;
}

std::string find_in_lib_dirs(const std::string &name) {
  static const char *dirs[] = {"/lib/x86_64-linux-gnu",
                               "/usr/lib/x86_64-linux-gnu",
                               "/lib64",
                               "/usr/lib64",
                               "/lib",
                               "/usr/lib",
                               "/usr/local/lib"};
  for (const char *d : dirs) {
    for (const std::string &cand : {name, name + ".so", "lib" + name + ".so"}) {
      std::string p = std::string(d) + "/" + cand;
      if (is_regular_file(p))
        return p;
    }
  }
  return "";
}

} // namespace

Result<std::string> find_in_path(const std::string &cmd) {
  if (cmd.find('/') != std::string::npos) {
    if (access(cmd.c_str(), X_OK) == 0 && is_regular_file(cmd))
      return cmd;
    return make_error("'" + cmd + "' does not exist or is not executable");
  }
  const char *env = getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string p = (dir.empty() ? "." : dir) + "/" + cmd;
    if (access(p.c_str(), X_OK) == 0 && is_regular_file(p))
      return p;
  }
  return make_error("command '" + cmd + "' not found in $PATH");
}

Result<std::string> resolve_binary_path(const std::string &target, int pid) {
  auto not_found = [&] {
    return make_error("uprobe target file '" + target + "' does not exist or is not executable");
  };
  if (target.find('/') != std::string::npos)
    return is_regular_file(target) ? Result<std::string>(target) : not_found();
  std::string p;
  if (pid > 0)
    p = find_in_proc_maps(target, pid);
  if (p.empty())
    p = find_in_ld_cache(target);
  if (p.empty())
    p = find_in_lib_dirs(target);
  if (p.empty()) {
    auto r = find_in_path(target);
    if (r)
      p = *r;
  }
  if (p.empty())
    return not_found();
  return p;
}

} // namespace gpubt::runtime
