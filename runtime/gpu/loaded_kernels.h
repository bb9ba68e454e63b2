// -l 'gpu:*' -c CMD for a Vulkan program: its compute shaders exist only once it makes them, so
// it is run, with the Vulkan layer noting the names a gpu probe would match (SPIR-V compute
// entry points, debug names of compute modules and pipelines) and instrumenting nothing.
#pragma once
#include <ostream>
#include <set>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

// Runs COMMAND to its end, its standard output sent to ERR's standard error (the list is
// gpubt's); says so on ERR first, and after, how it ended when not with status 0. Errors: the
// layer is not installed, COMMAND cannot run, or it made no Vulkan device.
Result<std::set<std::string>> vulkan_kernels_made_by(const std::string &command,
                                                     std::ostream &err);

} // namespace gpubt::runtime
