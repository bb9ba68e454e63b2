#include "runtime/abi/send_all.h"

#include <cerrno>
#include <sys/socket.h>

namespace gpubt::abi {

bool send_all(int fd, const void *bytes, size_t size) {
  const char *p = static_cast<const char *>(bytes);
  for (size_t done = 0; done < size;) {
    ssize_t n = send(fd, p + done, size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

} // namespace gpubt::abi
