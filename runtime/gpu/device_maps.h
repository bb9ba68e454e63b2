// Device map images (the bytes of a map's device storage, runtime/abi/device_abi.h) -> the
// MapData rows a host map has, so the printers print device maps exactly like host maps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/device_map_table.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// The table's rows in the host layout (runtime/abi/device_map_table.h owns the format).
using abi::add_device_map_image;
using abi::DeviceMapSnapshot;

// One image alone.
Result<DeviceMapSnapshot> read_device_map(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                          const uint8_t *image, size_t size);

// Adds DEVICE's rows (one map's, from its images) to MAPS[index] (the host map's): a key in both
// gets the device's values as more per-CPU values, so an aggregation host and gpu probes both
// update prints as one map. Each from_host or to_host map keeps the host's rows alone (its
// device table is a copy of them, or they of it). DEVICE and MAPS are indexed like spec.maps.
void merge_device_maps(const abi::ProgramSpec &spec, std::vector<MapData> &device,
                       std::vector<MapData> &maps);

// ROWS (one device map's, decoded) less BASE (the same map's rows when a host probe cleared or
// zeroed it): a count, a sum, an avg's and a stats' (sum, count) and a hist bucket are 64-bit
// words that only grow on the GPU, so what came since is the difference, each key's values
// summed into one. KEEP_ZERO (zero()): keys with nothing new stay, at 0; else (clear()) they go.
// Nothing is lost: an update the GPU made after the copy BASE came from counts after the clear.
void subtract_device_rows(const MapData &base, bool keep_zero, MapData &rows);

// Each row of ROWS (MAP's, its values from several processes, SMs or device slots) with its
// values folded into one, as the host's readers fold a per-CPU map's: counts, sums, an avg's and
// a stats' (sum, count) and hist buckets added word by word; a min's or max's extreme over the
// values that are set (is_set 0 when none is).
void fold_device_rows(const abi::MapSpec &map, MapData &rows);

// The warning printed with a map whose updates were dropped ("" when none were).
std::string device_map_drops_message(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                     uint64_t drops);

} // namespace gpubt::runtime
