#include "driver/option_error.h"

#include "frontend/nearest_name.h"

namespace gpubt::driver {
namespace {

// The long options whose name starts with PREFIX; the exact one alone if there is one.
std::vector<std::string> matching(const std::string &prefix, const std::vector<option> &long_opts) {
  std::vector<std::string> found;
  for (const auto &o : long_opts)
    if (o.name && std::string(o.name) == prefix)
      return {"--" + prefix};
    else if (o.name && std::string(o.name).rfind(prefix, 0) == 0)
      found.push_back("--" + std::string(o.name));
  return found;
}

} // namespace

// getopt's own words (glibc's), so a message reads the same as before, in one line.
std::string option_error(int c, char *const *argv, const std::vector<option> &long_opts) {
  std::string arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";
  bool is_long = arg.rfind("--", 0) == 0 && arg.size() > 2;
  std::string given = is_long ? arg.substr(0, arg.find('=')) : "";
  if (c == ':')
    return is_long ? "option '" + given + "' requires an argument"
                   : "option requires an argument -- '" + std::string(1, char(optopt)) + "'";
  if (optopt != 0 && is_long && arg.find('=') != std::string::npos)
    return "option '" + given + "' doesn't allow an argument";
  if (optopt != 0 || !is_long)
    return "invalid option -- '" + std::string(1, char(optopt)) + "'";
  auto found = matching(given.substr(2), long_opts);
  if (found.size() > 1) {
    std::string message = "option '" + given + "' is ambiguous; possibilities:";
    for (const auto &name : found)
      message += " '" + name + "'";
    return message;
  }
  std::vector<std::string> names;
  for (const auto &o : long_opts)
    if (o.name)
      names.push_back("--" + std::string(o.name));
  return "unrecognized option '" + given + "'" + frontend::did_you_mean(given, names);
}

} // namespace gpubt::driver
