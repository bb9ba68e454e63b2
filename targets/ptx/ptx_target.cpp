// Placeholder until the PTX target lands: answers with a clear error.
#include "targets/ptx/ptx_target.h"

namespace gpubt::targets {

std::unique_ptr<codegen::DeviceTarget> make_ptx_target(const codegen::TargetOptions &) {
  return nullptr;
}

} // namespace gpubt::targets
