// Finds the file a uprobe target or a -c command names: paths as given, bare library names
// through the traced process's mappings, the ld.so cache and the standard library dirs.
#pragma once
#include "runtime/abi/result.h"
#include <string>

namespace gpubt::runtime {

// "uprobe:TARGET:..." -> an existing file. TARGET with a '/' is taken as given; a bare name
// ("libc", "libc.so.6", "bash") is looked up in /proc/PID/maps (pid > 0), the ld.so cache, the
// standard library dirs, then $PATH. Error wording follows bpftrace.
Result<std::string> resolve_binary_path(const std::string &target, int pid = -1);

// execvp's lookup: CMD with a '/' as given, else the first executable in $PATH.
Result<std::string> find_in_path(const std::string &cmd);

} // namespace gpubt::runtime
