// What system() and cat() do in user space when their event arrives.
#pragma once
#include <cstddef>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

// system(): runs `command` with /bin/sh and returns what it printed (bpftrace prints it in
// place of the call, in event order).
std::string run_command(const std::string &command);

// cat(): the first `max_bytes` of the file, or bpftrace's "failed to open file" error.
Result<std::string> read_for_cat(const std::string &path, size_t max_bytes);

} // namespace gpubt::runtime
