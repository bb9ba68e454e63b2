// Writing a whole record to gpubt's socket from a traced program (the CUDA agent's printf and
// live map records, the Vulkan layer's live maps).
#pragma once

#include <cstddef>

namespace gpubt::abi {

// Sends all SIZE bytes (retrying short writes and EINTR). False when the socket failed (gpubt
// gone): never SIGPIPE, which would kill the traced program.
bool send_all(int fd, const void *bytes, size_t size);

} // namespace gpubt::abi
