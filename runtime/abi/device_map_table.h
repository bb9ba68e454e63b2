// The one host-side owner of a device map table's format (device_abi.h): what the CUDA agent, the
// Vulkan layer and the results reader do with a table's bytes. The probes' side is the IR emitter
// (codegen/device/device_maps.cpp). Sizes come from the specs: DeviceMapSpec for the table,
// MapSpec::key_size/value_size for the host map. Std only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/device_abi.h"
#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::abi {

// A table's first bytes, which never change once init_device_map_table wrote them (capacity and
// sizes): a rewrite of a live table (the CUDA agent's stream writes) may start past them.
constexpr size_t kDeviceMapFixedBytes = offsetof(gpubt_device_map_header, drops);

// Writes D's header (with DROPS) into IMAGE, storage_size() bytes already zeroed, and marks every
// slot READY when D is prefilled.
void init_device_map_table(const DeviceMapSpec &d, uint8_t *image, uint64_t drops = 0);

// Why IMAGE (SIZE bytes) is not a table of D's layout, or "" when it is.
std::string device_map_table_error(const DeviceMapSpec &d, const uint8_t *image, size_t size);

// F(key, value) for each READY slot of IMAGE, in slot order (key: D.key_size bytes, none for a
// scalar map; value: D.value_size bytes).
template <class F> void for_each_ready_slot(const DeviceMapSpec &d, const uint8_t *image, F &&f) {
  const uint8_t *entry = image + sizeof(gpubt_device_map_header);
  for (uint32_t i = 0; i < d.capacity; ++i, entry += d.entry_size) {
    uint64_t state;
    std::memcpy(&state, entry, 8);
    if (state == GPUBT_SLOT_READY)
      f(entry + 8, entry + 8 + d.key_size);
  }
}

// Places keys in a table exactly where the probes' search finds them (a BPF map's entries that
// gpu probes read): KEY_SIZE bytes of key (zero-padded to the slot's), VALUE_SIZE of value. A
// key seen again gets the new value; one that finds no free slot is dropped and counted.
class DeviceMapPlacer {
public:
  DeviceMapPlacer(const DeviceMapSpec &d, uint8_t *image, uint32_t key_size, uint32_t value_size);
  void place(const uint8_t *key, const uint8_t *value);
  uint64_t entries() const { return used_ + drops_; }
  uint64_t drops() const { return drops_; }

private:
  uint64_t hash(const uint8_t *key) const; // gpubt_key_hash of the zero-padded key
  const DeviceMapSpec &d_;
  uint8_t *base_;
  uint32_t key_size_, value_size_;
  uint64_t used_ = 0, drops_ = 0;
};

// A device map's rows in MAP's host (BPF) layout, so the printers print it like a host map.
struct DeviceMapSnapshot {
  runtime::MapData data; // keys and values in the host layout of the map
  uint64_t drops = 0;    // updates the devices dropped because the table was full
  std::map<std::vector<uint8_t>, size_t> rows; // key -> index in data
};

// Adds one table image (header then entries, from one CUDA context or Vulkan device) to INTO. A
// key already there gets this image's value as one more value of its entry, so the printers merge
// GPUs and contexts as they merge CPUs. Hist/lhist values hold every bucket of a key on the
// device; the host layout has one entry per (key, bucket) with a non-zero count.
Status add_device_map_image(const MapSpec &map, const DeviceMapSpec &d, const uint8_t *image,
                            size_t size, DeviceMapSnapshot &into);

} // namespace gpubt::abi
