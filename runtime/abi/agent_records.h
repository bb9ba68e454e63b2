// The records an agent sends gpubt besides printf's (live maps, running launches): each a whole
// ring record (gpubt_ring_record, EventHeader, payload, padded to 8 bytes) on the agent's socket.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::abi {

// PAYLOAD framed as one ring record of KIND.
std::string agent_record(EventKind kind, const std::string &payload);

// Whether BYTES are exactly one record of KIND.
bool is_agent_record(EventKind kind, const uint8_t *bytes, size_t size);

// Takes every record of KIND among the whole records at the front of RECORDS out of it, handing
// each payload (without padding guarantees: the reader checks its own lengths) to TAKE, which
// returns an error text or "". The other records stay, in order, compacted in place (a stream of
// printf records may be hundreds of MiB: never copied); a record cut short at the end stays.
Status take_agent_records(std::vector<uint8_t> &records, EventKind kind,
                          const std::function<std::string(const uint8_t *, size_t)> &take);

// Reads a payload front to back in fixed-size parts and strings; every read checks what is left.
class PayloadReader {
public:
  PayloadReader(const uint8_t *bytes, size_t size) : p_(bytes), left_(size) {}
  template <class T> bool read(T &out) {
    if (left_ < sizeof out)
      return false;
    std::memcpy(&out, p_, sizeof out);
    p_ += sizeof out, left_ -= sizeof out;
    return true;
  }
  bool read_string(std::string &out, size_t size) {
    if (left_ < size)
      return false;
    out.assign(reinterpret_cast<const char *>(p_), size);
    p_ += size, left_ -= size;
    return true;
  }

private:
  const uint8_t *p_;
  size_t left_;
};

} // namespace gpubt::abi
