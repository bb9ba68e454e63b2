// Small writes to device memory ahead of a launch as stream memory operations
// (cuStreamBatchMemOp): the GPU's front end makes them in the stream's order without a copy
// engine, and the values travel in the command itself, so nothing is staged in pinned memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda.h>

#include "runtime/abi/result.h"

namespace gpubt::agent {

class StreamWrites {
public:
  // Adds BYTES (SIZE a multiple of 8) for device address ADDRESS.
  void add(uint64_t address, const void *bytes, size_t size);
  size_t words() const { return ops_.size(); }
  void clear() { ops_.clear(); }
  // Issues every write on STREAM, after the work already there, and clears. Error: the
  // driver's (nothing was written).
  Status issue(CUstream stream);

private:
  std::vector<CUstreamBatchMemOpParams> ops_;
};

} // namespace gpubt::agent
