// Brings this process to its open-file limit for a test (accept at EMFILE): lowers the soft
// RLIMIT_NOFILE to just above what is open and takes every descriptor left. The destructor gives
// them back and restores the limit. Descriptors a test needs meanwhile are made before it.
#pragma once
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

#include "runtime/abi/unique_fd.h"

namespace gpubt::test {

class FdLimitFiller {
public:
  FdLimitFiller() {
    getrlimit(RLIMIT_NOFILE, &old_);
    int highest = open("/dev/null", O_RDONLY | O_CLOEXEC);
    close(highest);
    rlimit low = old_;
    low.rlim_cur = rlim_t(highest + 8);
    ok_ = setrlimit(RLIMIT_NOFILE, &low) == 0;
    for (;;) {
      runtime::UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
      if (!fd.valid())
        break;
      taken_.push_back(std::move(fd));
    }
  }
  ~FdLimitFiller() { release(); }
  void release() {
    taken_.clear();
    setrlimit(RLIMIT_NOFILE, &old_);
  }
  bool ok() const { return ok_; }

private:
  rlimit old_{};
  bool ok_ = false;
  std::vector<runtime::UniqueFd> taken_;
};

// CPU seconds this process has used (user and system), to tell a spinning thread from an idle one.
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

} // namespace gpubt::test
