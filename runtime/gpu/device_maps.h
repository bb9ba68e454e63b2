// Device map images (the bytes of a map's device storage, runtime/abi/device_abi.h) -> the
// MapData rows a host map has, so the printers print device maps exactly like host maps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

struct DeviceMapSnapshot {
  MapData data;       // keys and values in the host (BPF) layout of the map
  uint64_t drops = 0; // updates the devices dropped because the table was full
  std::map<std::vector<uint8_t>, size_t> rows; // key -> index in data
};

// Adds one image (the whole storage, header then entries, copied from one CUDA context) to
// INTO. A key already there gets this image's value as one more value of its entry, so the
// printers merge GPUs and contexts as they merge CPUs.
Status add_device_map_image(const abi::MapSpec &map, const abi::DeviceMapSpec &layout,
                            const uint8_t *image, size_t size, DeviceMapSnapshot &into);

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
