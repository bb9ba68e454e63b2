// The printf ring's records, in order (see ring_records.h).
#include "runtime/abi/ring_records.h"

#include <cstring>

#include "runtime/abi/device_abi.h"

namespace gpubt::abi {

uint64_t take_records(const uint8_t *raw, uint32_t capacity, std::vector<uint8_t> &out) {
  gpubt_device_ring h;
  std::memcpy(&h, raw, sizeof h);
  const uint8_t *data = raw + sizeof h;
  auto word = [&](uint64_t pos) {
    uint64_t w;
    std::memcpy(&w, data + pos % capacity, 8);
    return w;
  };
  uint64_t pos = h.tail;
  while (pos < h.head) {
    uint64_t first = word(pos);
    uint32_t size = static_cast<uint32_t>(first), commit = static_cast<uint32_t>(first >> 32);
    if (commit != static_cast<uint32_t>(pos / 8 + 1) || size < 8 || size % 8 || size > capacity)
      break;
    for (uint32_t off = 0; off < size; off += 8) {
      uint64_t w = word(pos + off);
      out.insert(out.end(), reinterpret_cast<uint8_t *>(&w), reinterpret_cast<uint8_t *>(&w) + 8);
    }
    pos += size;
  }
  return pos;
}

} // namespace gpubt::abi
