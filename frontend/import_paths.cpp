// Import paths on the filesystem: resolution, the kind a name says, the world-writable check.
#include "frontend/import_paths.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace gpubt::frontend {
namespace fs = std::filesystem;
namespace {

bool ends_with(const std::string &s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

enum class Named { Script, Header, BpfC, Other };

Named named(const std::string &name) {
  if (ends_with(name, ".bpf.c"))
    return Named::BpfC;
  if (ends_with(name, ".bt"))
    return Named::Script;
  if (ends_with(name, ".h"))
    return Named::Header;
  return Named::Other;
}

// Anyone could have put the file there, so bpftrace refuses it (sticky /tmp included).
std::string refuse_world_writable(const fs::path &dir, const std::string &written) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IWOTH))
    return "refusing to import \"" + written + "\": directory " + dir.string() +
           " is world-writable";
  return "";
}

std::string kind_error(Named kind, const std::string &written) {
  if (kind == Named::BpfC)
    return "importing BPF C (.bpf.c) is not supported by gpubt";
  return "cannot import \"" + written + "\": only .bt scripts, .h headers and directories of them "
                                        "can be imported";
}

} // namespace

ResolvedImport resolve_import(const std::string &written, const std::string &script) {
  ResolvedImport out;
  if (written.empty()) {
    out.error = "cannot import \"\": the path is empty";
    return out;
  }
  if (named(written) == Named::BpfC) {
    out.error = kind_error(Named::BpfC, written);
    return out;
  }
  fs::path base = fs::path(script).parent_path();
  fs::path path = fs::path(written).is_absolute() || base.empty() ? fs::path(written)
                                                                  : base / written;
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) {
    out.error = "cannot import \"" + written + "\": " + path.string() + ": " + ec.message();
    return out;
  }
  if (fs::is_directory(real, ec)) {
    if ((out.error = refuse_world_writable(real, written)).size())
      return out;
    std::vector<fs::path> names;
    for (const auto &entry : fs::directory_iterator(real, ec))
      if (entry.is_regular_file(ec) && named(entry.path().filename()) != Named::Other)
        names.push_back(entry.path());
    if (ec) {
      out.error = "cannot import \"" + written + "\": " + real.string() + ": " + ec.message();
      return out;
    }
    std::sort(names.begin(), names.end());
    for (const auto &p : names) {
      Named kind = named(p.filename());
      if (kind == Named::BpfC) {
        out.error = kind_error(kind, written) + " (" + p.string() + ")";
        return out;
      }
      out.files.push_back({p.string(), kind == Named::Script ? ImportKind::Script
                                                             : ImportKind::Header});
    }
    return out;
  }
  Named kind = named(real.filename());
  if (kind == Named::BpfC || kind == Named::Other) {
    out.error = kind_error(kind, written);
    return out;
  }
  if ((out.error = refuse_world_writable(real.parent_path(), written)).size())
    return out;
  out.files.push_back({real.string(), kind == Named::Script ? ImportKind::Script
                                                            : ImportKind::Header});
  return out;
}

bool read_import(const std::string &path, std::string &text, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  if (in)
    buf << in.rdbuf();
  if (!in || in.bad()) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  text = buf.str();
  return true;
}

} // namespace gpubt::frontend
