// A device map storage read back from the GPU (written by gpu probes) -> its entries in a BPF
// map that host probes read: the inverse of host_map_snapshot. Raw bpf(2).
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/abi/result.h"
#include "runtime/cuda_agent/host_map_bpf.h"

namespace gpubt::agent {

// Writes every READY entry of IMAGE (SIZE bytes: header + entries, device_abi.h) into the BPF
// map BPF_MAP_FD with BPF_ANY: the first host_key_size bytes of its key (a scalar map: the u64
// key 0) and the first host_value_size bytes of its value; EMPTY and BUSY slots are skipped.
// BPF_MAP_UPDATE_BATCH, BPF_MAP_UPDATE_ELEM where the map type has none. Returns the number of
// entries written. When the BPF map is full (E2BIG; an array map: an index past max_entries)
// the entries that fit are still written and the error reads "... N of M entries did not fit
// (E2BIG)"; NOT_WRITTEN (if given) gets N, and 0 on success or any other error. A scalar map
// striped per SM (key_size 0, capacity > 1) is refused: its entries must be merged, not
// copied. Allocates nothing once this thread's scratch has grown to size.
Result<uint64_t> write_back_device_map(int bpf_map_fd, const HostMapLayout &layout,
                                       const uint8_t *image, size_t size,
                                       uint64_t *not_written = nullptr);

} // namespace gpubt::agent
