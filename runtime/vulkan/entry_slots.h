// The probes' memory has a context slot per instrumented entry point (probe_memory.h). A slot is
// held by the shader module it was linked into and by every pipeline made with it (a pipeline
// outlives its module, and a twin pipeline holds its own); once all of them are destroyed it is
// free for the next one. No Vulkan calls.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace gpubt::runtime::vulkan {

class EntrySlots {
public:
  explicit EntrySlots(uint32_t capacity) : capacity_(capacity) {}

  // A slot held once, a freed one first; none when CAPACITY are held.
  std::optional<uint32_t> take() {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else if (refs_.size() < capacity_) {
      slot = uint32_t(refs_.size());
      refs_.push_back(0);
    } else {
      return std::nullopt;
    }
    refs_[slot] = 1;
    return slot;
  }
  void hold(uint32_t slot) {
    if (slot < refs_.size() && refs_[slot])
      ++refs_[slot];
  }
  void release(uint32_t slot) {
    if (slot < refs_.size() && refs_[slot] && --refs_[slot] == 0)
      free_.push_back(slot);
  }
  uint32_t held() const { return uint32_t(refs_.size() - free_.size()); }
  uint32_t used() const { return uint32_t(refs_.size()); } // slots 0..used()-1 were ever taken
  uint32_t capacity() const { return capacity_; }

private:
  uint32_t capacity_;
  std::vector<uint32_t> refs_; // per slot ever used: its holders (0: free)
  std::vector<uint32_t> free_;
};

} // namespace gpubt::runtime::vulkan
