// GPU maps while the program runs (issue 26). Every live period an agent (the CUDA agent, the
// Vulkan layer) sends what its process's device maps hold now as one ring record of kind
// EventKind::LiveMaps among its printf records: the same socket, the same framing, so a reader
// of one agent's records sees its maps in order with them. gpubt keeps the latest per process
// until the final results replace them. Std only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/result.h"

namespace gpubt::abi {

// A whole ring record (gpubt_ring_record, EventHeader, payload, padded to 8 bytes) carrying
// process PID's device map images (IMAGES.images, sparse: write_sparse_images; the rest of IMAGES
// is not sent), copied from COPIED_NS (CLOCK_MONOTONIC: when the copy began) on. The time follows
// the results (a gpubt from before it read the images without it; one from before sparse images
// says the record does not parse). take_from reads whole images too (an older agent's).
std::string live_maps_record(uint32_t pid, const AgentResults &images, uint64_t copied_ns);

// CLOCK_MONOTONIC now, in ns: the clock of COPIED_NS and of RunningLaunches::sent_ns.
uint64_t live_clock_ns();

// Whether BYTES are exactly one LiveMaps record (an agent sends each in a frame of its own).
bool is_live_maps_record(const uint8_t *bytes, size_t size);

// The latest images of each process, taken out of a stream of ring records.
class LiveMaps {
public:
  // Takes every LiveMaps record among the whole records at the front of RECORDS out of it (the
  // others stay, in order; a record cut short at the end stays for the next call). Error: a
  // LiveMaps record that does not parse (it is dropped; the others are still taken).
  Status take_from(std::vector<uint8_t> &records);
  bool empty() const { return latest_.empty(); }
  // How many records were taken so far: a reader that decodes results() again when it changes
  // decodes each record once.
  uint64_t taken() const { return taken_; }
  // Every process's latest images, as one AgentResults (images only).
  AgentResults results() const;
  // When the copy of PID's latest images began (0: none taken, or from an agent that does not
  // say): a reader of what a process did at some time waits for a copy begun after it.
  uint64_t copied_ns(uint32_t pid) const;

private:
  std::map<uint32_t, AgentResults> latest_;
  std::map<uint32_t, uint64_t> copied_ns_;
  uint64_t taken_ = 0;
};

} // namespace gpubt::abi
