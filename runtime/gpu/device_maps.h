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

// The warning printed with a map whose updates were dropped ("" when none were).
std::string device_map_drops_message(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                                     uint64_t drops);

} // namespace gpubt::runtime
