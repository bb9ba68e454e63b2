// A hand-written probe module in the device ABI (runtime/abi/device_abi.h), to check the agent
// without gpubt's codegen: gpubt_probe_0 (exit) counts per global thread index into map 0
// (slot = tid), gpubt_probe_1 (entry) counts into scalar map 1; for timings gpubt_probe_2 does
// nothing and gpubt_probe_3 (exit) counts into scalar map 1 with one atomic per thread.
#include <cstdint>

#include "runtime/abi/device_abi.h"

__device__ uint64_t global_tid() {
  uint64_t block =
      blockIdx.x + uint64_t(blockIdx.y) * gridDim.x + uint64_t(blockIdx.z) * gridDim.x * gridDim.y;
  uint64_t local = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  return block * (blockDim.x * blockDim.y * blockDim.z) + local;
}

__device__ unsigned long long *entry(const gpubt_device_ctx *c, int map, uint64_t slot) {
  auto *h = reinterpret_cast<gpubt_device_map_header *>(c->maps[map]);
  auto *base = reinterpret_cast<uint8_t *>(h + 1);
  return reinterpret_cast<unsigned long long *>(base + (slot & (h->capacity - 1)) * h->entry_size);
}

__device__ void claim(unsigned long long *e, int key_words, const uint64_t *key) {
  if (atomicCAS(e, GPUBT_SLOT_EMPTY, GPUBT_SLOT_BUSY) == GPUBT_SLOT_EMPTY) {
    for (int i = 0; i < key_words; ++i)
      e[1 + i] = key[i];
    __threadfence();
    atomicExch(e, GPUBT_SLOT_READY);
  }
}

extern "C" __device__ __noinline__ int gpubt_probe_0(void *userdata, uint64_t pc) {
  auto *c = static_cast<const gpubt_device_ctx *>(userdata);
  if (!c || !(c->probe_mask & 1))
    return GPUBT_PATCH_SUCCESS;
  uint64_t tid = global_tid();
  unsigned long long *e = entry(c, 0, tid);
  claim(e, 1, &tid);
  atomicAdd(e + 2, 1ull);
  return GPUBT_PATCH_SUCCESS;
}

// Scalar map 1 += 1, when probe BIT is on for this kernel.
__device__ int count_scalar(void *userdata, int bit) {
  auto *c = static_cast<const gpubt_device_ctx *>(userdata);
  if (!c || !(c->probe_mask >> bit & 1))
    return GPUBT_PATCH_SUCCESS;
  unsigned long long *e = entry(c, 1, 0);
  claim(e, 0, nullptr);
  atomicAdd(e + 1, 1ull);
  return GPUBT_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ int gpubt_probe_1(void *userdata, uint64_t pc) {
  return count_scalar(userdata, 1);
}

extern "C" __device__ __noinline__ int gpubt_probe_2(void *userdata, uint64_t pc) {
  return GPUBT_PATCH_SUCCESS;
}

extern "C" __device__ __noinline__ int gpubt_probe_3(void *userdata, uint64_t pc) {
  return count_scalar(userdata, 3);
}
