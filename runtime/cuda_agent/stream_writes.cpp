// A batch is one command in the stream: a kernel running meanwhile could see part of it only
// within the nanoseconds the GPU's front end takes for it. At most kMaxBatch writes a command (the
// driver's limit is 256): a multiple of 3, so that the clock's three words per kernel stay in one.
#include "runtime/cuda_agent/stream_writes.h"

#include <algorithm>
#include <cstring>

#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {
namespace {

constexpr size_t kMaxBatch = 255;

} // namespace

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
  CUresult r = batch ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
  for (size_t at = 0; r == CUDA_SUCCESS && at < ops_.size(); at += kMaxBatch)
    r = batch(stream, unsigned(std::min(kMaxBatch, ops_.size() - at)), ops_.data() + at, 0);
  ops_.clear();
  if (r == CUDA_SUCCESS)
    return Ok{};
  const char *name = nullptr;
  GPUBT_DRIVER(cuGetErrorName)(r, &name);
  return make_error(std::string("cuStreamBatchMemOp failed (") +
                    (name ? name : std::to_string(int(r))) + ")");
}

} // namespace gpubt::agent
