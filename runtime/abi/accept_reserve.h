// accept() that cannot spin at the open-file limit. A listener whose connection cannot be taken
// (EMFILE, ENFILE) stays readable, so a poll loop around accept() woke at once, failed and
// polled again for as long as the limit lasted: a CPU of the traced host (the agent's control
// thread, the --metrics thread). The usual cure (libev's, nginx's): hold one spare descriptor;
// at the limit, free it, take the waiting connection and close it at once (the client sees it
// closed), then take the spare again. Std and POSIX only.
#pragma once
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

class AcceptReserve {
public:
  AcceptReserve(); // takes the spare descriptor (/dev/null)
  // accept4(LISTENER, FLAGS): the connection, or an invalid fd when none is waiting, accept
  // failed otherwise, or one waiting at the limit was turned away as above. When the spare
  // could not be had again either, waits 100 ms first: a retry cannot be a spin.
  UniqueFd accept(int listener, int flags);

private:
  UniqueFd spare_;
};

} // namespace gpubt::runtime
