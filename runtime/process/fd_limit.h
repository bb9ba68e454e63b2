// gpubt's open-file limit: each uprobe and map is a descriptor, so gpubt raises its soft
// RLIMIT_NOFILE to the hard limit (as bpftrace does); a -c program gets the limit it would have
// had.
#pragma once
#include <string>

namespace gpubt::runtime {

void raise_fd_limit();    // soft limit := hard limit; remembers the soft limit
void restore_fd_limit();  // in a forked child, before exec: the remembered soft limit
unsigned long fd_limit(); // the soft limit now, for messages
bool out_of_fds(int err); // EMFILE or ENFILE
// strerror(ERR), with "(the open-file limit is N)" when ERR says gpubt ran out of descriptors.
std::string error_text(int err);

} // namespace gpubt::runtime
