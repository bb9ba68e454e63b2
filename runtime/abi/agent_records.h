// The records an agent sends gpubt besides printf's (live maps, running launches): each a whole
// ring record (gpubt_ring_record, EventHeader, payload, padded to 8 bytes) on the agent's socket.
#pragma once
#include <cstddef>
#include <cstdint>
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

} // namespace gpubt::abi
