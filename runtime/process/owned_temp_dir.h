// Private temporary folders that a later gpubt can tell are abandoned: each holds a lock file
// that its gpubt keeps flock()ed; the kernel drops the lock however that gpubt ends (kill -9).
#pragma once
#include <string>

#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

struct OwnedTempDir {
  std::string path;
  UniqueFd lock; // closing it (or dying) marks the folder abandoned
};

// mkdtemp("/tmp/PREFIXXXXXXX"), mode 0700, with its lock taken.
Result<OwnedTempDir> make_owned_temp_dir(const std::string &prefix);

// Removes this user's /tmp/PREFIX* folders whose lock nobody holds (their gpubt died), and
// lock-less ones older than an hour (made by a gpubt without locks). Returns how many.
int remove_abandoned_temp_dirs(const std::string &prefix, const std::string &root = "/tmp");

} // namespace gpubt::runtime
