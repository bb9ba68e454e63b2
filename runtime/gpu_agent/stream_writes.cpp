// One cuStreamBatchMemOp per launch, however many words: a batch is one command in the stream.
#include "runtime/gpu_agent/stream_writes.h"

#include <cstring>

#include "runtime/gpu_agent/driver_api.h"

namespace gpubt::agent {

void StreamWrites::add(uint64_t address, const void *bytes, size_t size) {
  for (size_t off = 0; off + 8 <= size; off += 8) {
    CUstreamBatchMemOpParams op;
    std::memset(&op, 0, sizeof op);
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    op.writeValue.address = address + off;
    std::memcpy(&op.writeValue.value64, static_cast<const uint8_t *>(bytes) + off, 8);
    ops_.push_back(op);
  }
}

Status StreamWrites::issue(CUstream stream) {
  auto batch = GPUBT_DRIVER(cuStreamBatchMemOp);
  CUresult r = batch ? batch(stream, unsigned(ops_.size()), ops_.data(), 0) : CUDA_ERROR_NOT_FOUND;
  ops_.clear();
  if (r == CUDA_SUCCESS)
    return Ok{};
  const char *name = nullptr;
  GPUBT_DRIVER(cuGetErrorName)(r, &name);
  return make_error(std::string("cuStreamBatchMemOp failed (") +
                    (name ? name : std::to_string(int(r))) + ")");
}

} // namespace gpubt::agent
