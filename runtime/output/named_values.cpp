// Value texts through libc (inet_ntop, strerror, getpwuid) and the mounted cgroup hierarchies.
#include "runtime/output/named_values.h"

#include <arpa/inet.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace gpubt::runtime {

std::string buffer_text(std::string_view bytes, BufferStyle style) {
  std::string out;
  char hex[8];
  for (unsigned char ch : bytes) {
    if (style == BufferStyle::Printable && ch >= 0x20 && ch < 0x7f) {
      out += char(ch);
      continue;
    }
    if (style == BufferStyle::Hex && !out.empty())
      out += ' ';
    std::snprintf(hex, sizeof hex, style == BufferStyle::Hex ? "%02x" : "\\x%02x", ch);
    out += hex;
  }
  return out;
}

std::string inet_text(uint64_t family, const uint8_t *addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  int af = family == AF_INET6 ? AF_INET6 : family == AF_INET ? AF_INET : -1;
  if (af < 0 || !inet_ntop(af, addr, buf, sizeof buf))
    return "";
  return buf;
}

std::string mac_text(const uint8_t *a) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02X:%02X:%02X:%02X:%02X:%02X", a[0], a[1], a[2], a[3], a[4],
                a[5]);
  return buf;
}

std::string errno_text(int64_t err) {
  char buf[256];
  return strerror_r(int(err), buf, sizeof buf); // GNU strerror_r: returns the text
}

// bpftrace's table (its stdlib/strings/signal.h, after glibc's strsignal): "N/A" past it.
std::string signal_text(int64_t sig) {
  static const char *const kNames[] = {
      "Unknown signal 0", "Hangup", "Interrupt", "Quit", "Illegal instruction",
      "Trace/breakpoint trap", "Aborted", "Bus error", "Floating point exception", "Killed",
      "User defined signal 1", "Segmentation fault", "User defined signal 2", "Broken pipe",
      "Alarm clock", "Terminated", "Stack fault", "Child exited", "Continued",
      "Stopped (signal)", "Stopped", "Stopped (tty input)", "Stopped (tty output)",
      "Urgent I/O condition", "CPU time limit exceeded", "File size limit exceeded",
      "Virtual timer expired", "Profiling timer expired", "Window changed", "I/O possible",
      "Power failure", "Bad system call", "Unknown signal 32", "Unknown signal 33"};
  constexpr int64_t kNamed = sizeof kNames / sizeof kNames[0];
  int32_t s = int32_t(sig); // bpftrace passes (int32)sig
  if (s >= 0 && s < kNamed)
    return kNames[s];
  if (s >= kNamed && s <= 64) // SIGRTMIN + 2 .. SIGRTMAX
    return "Real-time signal " + std::to_string(s - kNamed);
  return "N/A";
}

std::string user_name(uint64_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid_t(uid), &pw, buf, sizeof buf, &found) == 0 && found)
    return found->pw_name;
  return std::to_string(uid);
}

namespace {

struct Hierarchy {
  std::string name, mount;
};

// cgroup and cgroup2 mounts from /proc/self/mountinfo: "ID PARENT M:N ROOT MOUNT OPTS ... - TYPE
// SOURCE SUPER_OPTS".
std::vector<Hierarchy> cgroup_hierarchies() {
  std::vector<Hierarchy> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mount, word;
    f >> id >> parent >> dev >> root >> mount;
    while (f >> word && word != "-") {
    }
    std::string type, source, super;
    f >> type >> source >> super;
    if (type == "cgroup2") {
      out.push_back({"unified", mount});
    } else if (type == "cgroup") {
      std::string name;
      std::istringstream opts(super);
      for (std::string o; std::getline(opts, o, ',');) {
        if (o.rfind("name=", 0) == 0)
          name = o.substr(5);
        else if (o != "rw" && o != "ro" && o.find('=') == std::string::npos &&
                 o != "noprefix" && o != "clone_children" && o != "xattr" && name.empty())
          name = o;
      }
      out.push_back({name, mount});
    }
  }
  std::sort(out.begin(), out.end(), [](const Hierarchy &a, const Hierarchy &b) {
    return (a.name != "unified") < (b.name != "unified") ||
           ((a.name != "unified") == (b.name != "unified") && a.name < b.name);
  });
  return out;
}

// The directory under MOUNT whose inode is ID (a cgroup's id), relative to MOUNT.
std::optional<std::string> find_cgroup(const std::string &mount, uint64_t id) {
  namespace fs = std::filesystem;
  std::error_code ec;
  struct stat st;
  if (stat(mount.c_str(), &st) == 0 && st.st_ino == id)
    return "/";
  for (fs::recursive_directory_iterator it(mount, fs::directory_options::skip_permission_denied,
                                           ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || stat(it->path().c_str(), &st) != 0 || st.st_ino != id)
      continue;
    return "/" + fs::relative(it->path(), mount, ec).string();
  }
  return std::nullopt;
}

} // namespace

std::string cgroup_paths(uint64_t cgroup_id) {
  std::string out;
  for (const auto &h : cgroup_hierarchies())
    if (auto path = find_cgroup(h.mount, cgroup_id))
      out += (out.empty() ? "" : ",") + h.name + ":" + *path;
  return out;
}

} // namespace gpubt::runtime
