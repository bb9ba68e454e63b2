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

// The kernel's __def_gfpflag_names order (include/trace/events/mmflags.h): compound masks
// first, so that what they cover is named once; the bits of include/linux/gfp_types.h.
std::string gfp_flags_text(uint64_t flags) {
  enum : uint64_t {
    DMA = 1 << 0, HIGHMEM = 1 << 1, DMA32 = 1 << 2, MOVABLE = 1 << 3, HIGH = 1 << 5, IO = 1 << 6,
    FS = 1 << 7, ZERO = 1 << 8, DIRECT_RECLAIM = 1 << 10, KSWAPD_RECLAIM = 1 << 11,
    WRITE = 1 << 12, NOWARN = 1 << 13, RETRY_MAYFAIL = 1 << 14, NOFAIL = 1 << 15,
    NORETRY = 1 << 16, MEMALLOC = 1 << 17, COMP = 1 << 18, NOMEMALLOC = 1 << 19,
    HARDWALL = 1 << 20, THISNODE = 1 << 21, ACCOUNT = 1 << 22, ZEROTAGS = 1 << 23,
    SKIP_ZERO = 1 << 24, SKIP_KASAN = 1 << 25, NO_OBJ_EXT = 1 << 26,
    KERNEL = DIRECT_RECLAIM | KSWAPD_RECLAIM | IO | FS, NOIO = DIRECT_RECLAIM | KSWAPD_RECLAIM,
    NOFS = NOIO | IO, USER = NOFS | FS | HARDWALL, HIGHUSER = USER | HIGHMEM,
    HIGHUSER_MOVABLE = HIGHUSER | MOVABLE | SKIP_KASAN,
    TRANSHUGE_LIGHT = (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & ~NOIO,
  };
  static const std::pair<uint64_t, const char *> kNames[] = {
      {TRANSHUGE_LIGHT | DIRECT_RECLAIM, "GFP_TRANSHUGE"},
      {TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"},
      {HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"},
      {HIGHUSER, "GFP_HIGHUSER"},
      {USER, "GFP_USER"},
      {KERNEL | ACCOUNT, "GFP_KERNEL_ACCOUNT"},
      {KERNEL, "GFP_KERNEL"},
      {NOFS, "GFP_NOFS"},
      {HIGH | KSWAPD_RECLAIM, "GFP_ATOMIC"},
      {NOIO, "GFP_NOIO"},
      {KSWAPD_RECLAIM | NOWARN, "GFP_NOWAIT"},
      {DMA, "GFP_DMA"},
      {HIGHMEM, "__GFP_HIGHMEM"},
      {DMA32, "GFP_DMA32"},
      {HIGH, "__GFP_HIGH"},
      {IO, "__GFP_IO"},
      {FS, "__GFP_FS"},
      {ZERO, "__GFP_ZERO"},
      {DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"},
      {KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"},
      {WRITE, "__GFP_WRITE"},
      {NOWARN, "__GFP_NOWARN"},
      {RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"},
      {NOFAIL, "__GFP_NOFAIL"},
      {NORETRY, "__GFP_NORETRY"},
      {MEMALLOC, "__GFP_MEMALLOC"},
      {COMP, "__GFP_COMP"},
      {NOMEMALLOC, "__GFP_NOMEMALLOC"},
      {HARDWALL, "__GFP_HARDWALL"},
      {THISNODE, "__GFP_THISNODE"},
      {ACCOUNT, "__GFP_ACCOUNT"},
      {ZEROTAGS, "__GFP_ZEROTAGS"},
      {SKIP_ZERO, "__GFP_SKIP_ZERO"},
      {SKIP_KASAN, "__GFP_SKIP_KASAN"},
      {NO_OBJ_EXT, "__GFP_NO_OBJ_EXT"},
  };
  if (flags == 0)
    return "0";
  std::string out;
  for (const auto &[mask, name] : kNames)
    if ((flags & mask) == mask) {
      out += (out.empty() ? "" : "|") + std::string(name);
      flags &= ~mask;
    }
  if (flags) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(flags));
    out += (out.empty() ? "" : "|") + std::string(hex);
  }
  return out;
}

} // namespace gpubt::runtime
