// Reading the printf ring (struct gpubt_device_ring, device_abi.h) on the host: what the CUDA
// agent and the Vulkan layer both drain.
#pragma once
#include <cstdint>
#include <vector>

namespace gpubt::abi {

// Appends the complete records of RAW (ring header + CAPACITY data bytes) from its tail to OUT,
// stopping at the first uncommitted one; returns the position after the last record taken.
uint64_t take_records(const uint8_t *raw, uint32_t capacity, std::vector<uint8_t> &out);

} // namespace gpubt::abi
