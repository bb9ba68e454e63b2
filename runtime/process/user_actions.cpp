// system() through popen, cat() through a plain read.
#include "runtime/process/user_actions.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpubt::runtime {

std::string run_command(const std::string &command) {
  std::string out;
  std::FILE *p = popen(command.c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  pclose(p);
  return out;
}

Result<std::string> read_for_cat(const std::string &path, size_t max_bytes) {
  std::FILE *f = std::fopen(path.c_str(), "r");
  if (!f)
    return make_error("failed to open file '" + path + "': " + std::strerror(errno));
  std::string out(max_bytes, '\0');
  size_t n = std::fread(out.data(), 1, max_bytes, f);
  std::fclose(f);
  out.resize(n);
  return out;
}

} // namespace gpubt::runtime
