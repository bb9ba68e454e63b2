// gpubt's open-file limit: each uprobe and map is a descriptor, so gpubt raises its soft
// RLIMIT_NOFILE to the hard limit (as bpftrace does); a -c program gets the limit it would have
// had.
#pragma once

namespace gpubt::runtime {

void raise_fd_limit();    // soft limit := hard limit; remembers the soft limit
void restore_fd_limit();  // in a forked child, before exec: the remembered soft limit
unsigned long fd_limit(); // the soft limit now, for messages
bool out_of_fds(int err); // EMFILE or ENFILE

} // namespace gpubt::runtime
