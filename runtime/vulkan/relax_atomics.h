// Mesa's lavapipe (gallivm, seen on Mesa 22.3) loses a subgroup for the rest of the shader when
// memory barriers, or the ones an atomic's acquire/release semantics imply, run twice in one pass
// of a loop that some of its lanes have left: a map's slot search where one lane's key collides.
// Relaxed there costs little: lavapipe makes every read-modify-write atomic a sequentially
// consistent LLVM atomic whatever the SPIR-V asks, and runs on x86, which keeps stores in order
// with stores and loads with loads (a slot's key is written before its state says ready).
#pragma once
#include <cstdint>
#include <vector>

namespace gpubt::runtime::vulkan {

// MODULE with every atomic's memory semantics Relaxed and its OpMemoryBarriers removed.
std::vector<uint32_t> relax_atomics(const std::vector<uint32_t> &module);

} // namespace gpubt::runtime::vulkan
