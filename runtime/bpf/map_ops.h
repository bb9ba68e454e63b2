// Whole-map operations on a live BPF map: snapshot, clear(), zero(), and the globals words.
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// True for the per-CPU map types (one value per possible CPU).
bool is_percpu_map(uint32_t bpf_type);

// Every key and value of the map; per-CPU maps give one value per possible CPU, each
// value_size bytes (the kernel pads each CPU's slot to 8 bytes; the padding is dropped).
MapData read_map(int fd, const abi::MapSpec &spec);

// clear(): deletes every key (array maps cannot delete, so they are zeroed).
void clear_map(int fd, const abi::MapSpec &spec);

// zero(): sets every value (all CPUs) to 0, keeping the keys.
void zero_map(int fd, const abi::MapSpec &spec);

// Makes the map hold ROWS and nothing else (each row's first value; a per-CPU map gets it in
// CPU 0's slot, the other CPUs' zero, which its readers add or skip as unset): keys not in ROWS
// are deleted. Returns how many rows the map refused (full), or an error of another refusal.
Result<uint64_t> replace_map_rows(int fd, const abi::MapSpec &spec, const MapData &rows);

// Writes the GlobalSlot words (value = uint64[N] at key 0) of the globals map.
Status write_globals(int fd, const abi::MapSpec &spec, uint64_t start_ns, uint64_t child_pid);

} // namespace gpubt::runtime
