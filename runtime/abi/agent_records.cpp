#include "runtime/abi/agent_records.h"

#include <cstring>

#include "runtime/abi/device_abi.h"

namespace gpubt::abi {
namespace {

constexpr size_t kHead = sizeof(gpubt_ring_record) + sizeof(EventHeader);

} // namespace

std::string agent_record(EventKind kind, const std::string &payload) {
  std::string out(kHead, '\0');
  out += payload;
  out.resize((out.size() + 7) / 8 * 8, '\0');
  gpubt_ring_record r{static_cast<uint32_t>(out.size()), 0};
  EventHeader h{static_cast<uint32_t>(kind), 0};
  std::memcpy(out.data(), &r, sizeof r);
  std::memcpy(out.data() + sizeof r, &h, sizeof h);
  return out;
}

bool is_agent_record(EventKind kind, const uint8_t *bytes, size_t size) {
  if (size < kHead)
    return false;
  gpubt_ring_record r;
  EventHeader h;
  std::memcpy(&r, bytes, sizeof r);
  std::memcpy(&h, bytes + sizeof r, sizeof h);
  return r.size == size && h.kind == uint32_t(kind);
}

Status take_agent_records(std::vector<uint8_t> &records, EventKind kind,
                          const std::function<std::string(const uint8_t *, size_t)> &take) {
  std::string error;
  size_t pos = 0, kept = 0;
  while (records.size() - pos >= kHead) {
    gpubt_ring_record r;
    EventHeader h;
    std::memcpy(&r, records.data() + pos, sizeof r);
    std::memcpy(&h, records.data() + pos + sizeof r, sizeof h);
    if (r.size < kHead || r.size > records.size() - pos)
      break; // cut short (or not a record: left for the printer, which stops there too)
    if (h.kind != uint32_t(kind)) {
      if (kept != pos)
        std::memmove(records.data() + kept, records.data() + pos, r.size);
      kept += r.size;
    } else if (std::string e = take(records.data() + pos + kHead, r.size - kHead); !e.empty()) {
      error = e;
    }
    pos += r.size;
  }
  if (kept != pos)
    records.erase(records.begin() + kept, records.begin() + pos);
  if (!error.empty())
    return make_error(error);
  return Ok{};
}

} // namespace gpubt::abi
