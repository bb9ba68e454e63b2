// A host BPF map (written by host probes, read by gpu probes) -> the bytes of its device map
// storage, every entry at the slot where the probes' search finds it (device_abi.h). Raw bpf(2):
// the agent has no libbpf.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/cuda_agent/host_map_bpf.h"
#include "runtime/cuda_agent/host_map_writeback.h" // the inverse: callers of one use both

namespace gpubt::agent {

// Fills IMAGE (resized to layout.device.storage_size(), zeroed) with the header and every entry
// of the BPF map BPF_MAP_FD, READY, keys and values zero-padded; entries that find no free slot
// count in the header's drops. Returns the number of entries read. Allocates nothing once
// IMAGE and this thread's scratch have grown to size.
Result<uint64_t> snapshot_host_map(int bpf_map_fd, const HostMapLayout &layout,
                                   std::vector<uint8_t> &image);

} // namespace gpubt::agent
