// accept() with a spare descriptor for the open-file limit (see accept_reserve.h).
#include "runtime/abi/accept_reserve.h"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

namespace gpubt::runtime {
namespace {

UniqueFd take_spare() { return UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC)); }

} // namespace

AcceptReserve::AcceptReserve() : spare_(take_spare()) {}

UniqueFd AcceptReserve::accept(int listener, int flags) {
  UniqueFd fd(accept4(listener, nullptr, nullptr, flags));
  if (fd.valid() || (errno != EMFILE && errno != ENFILE))
    return fd;
  if (!spare_.valid()) {
    poll(nullptr, 0, 100);
    spare_ = take_spare();
    return UniqueFd();
  }
  spare_.reset();
  UniqueFd turned_away(accept4(listener, nullptr, nullptr, flags | SOCK_CLOEXEC));
  turned_away.reset(); // before the spare is taken again: it needs that descriptor
  spare_ = take_spare();
  return UniqueFd();
}

} // namespace gpubt::runtime
