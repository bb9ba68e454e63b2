// Reads a BPF map with BPF_MAP_LOOKUP_BATCH (GET_NEXT_KEY + LOOKUP_ELEM where the map type has
// no batch ops) into per-thread scratch, and places each entry as the device search expects.
#include "runtime/cuda_agent/host_map_snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/abi/device_map_table.h"

namespace gpubt::agent {
namespace {

constexpr uint32_t kBatchEntries = 1024; // entries per LOOKUP_BATCH call (at most)

// Kept per thread so that a snapshot before every launch allocates nothing once grown.
struct Scratch {
  std::vector<uint8_t> keys, values, batch_in, batch_out;
};
thread_local Scratch scratch;

using Placer = abi::DeviceMapPlacer;

void grow(std::vector<uint8_t> &v, size_t n) {
  if (v.size() < n)
    v.resize(n);
}

// -1: the map type has no batch lookup (nothing read yet); 0: done; else an error.
int read_batched(int fd, const HostMapLayout &l, const bpf_map_info &info, Placer &placer) {
  uint32_t chunk = std::clamp<uint32_t>(info.max_entries, 1, kBatchEntries);
  size_t token = std::max<size_t>(8, info.key_size);
  grow(scratch.batch_in, token);
  grow(scratch.batch_out, token);
  for (bool first = true;;) {
    grow(scratch.keys, size_t(chunk) * l.host_key_size);
    grow(scratch.values, size_t(chunk) * l.host_value_size);
    union bpf_attr attr {};
    attr.batch.in_batch = first ? 0 : bpf_ptr(scratch.batch_in.data());
    attr.batch.out_batch = bpf_ptr(scratch.batch_out.data());
    attr.batch.keys = bpf_ptr(scratch.keys.data());
    attr.batch.values = bpf_ptr(scratch.values.data());
    attr.batch.count = chunk;
    attr.batch.map_fd = fd;
    long rc = sys_bpf(BPF_MAP_LOOKUP_BATCH, attr);
    int err = rc == 0 ? 0 : errno;
    if (err == ENOSPC && attr.batch.count == 0 && chunk < (1u << 24)) {
      chunk *= 2; // one bucket holds more than CHUNK entries
      continue;
    }
    if (first && (err == EINVAL || err == EOPNOTSUPP || err == ENOTSUP || err == 524 /*ENOTSUPP*/))
      return -1;
    if (err != 0 && err != ENOENT)
      return err;
    for (uint32_t i = 0; i < attr.batch.count; ++i)
      placer.place(scratch.keys.data() + size_t(i) * l.host_key_size,
                   scratch.values.data() + size_t(i) * l.host_value_size);
    if (err == ENOENT)
      return 0;
    std::swap(scratch.batch_in, scratch.batch_out);
    first = false;
  }
}

int read_one_by_one(int fd, const HostMapLayout &l, const bpf_map_info &info, Placer &placer) {
  grow(scratch.keys, 2 * size_t(l.host_key_size));
  grow(scratch.values, l.host_value_size);
  uint8_t *cur = scratch.keys.data(), *next = cur + l.host_key_size;
  // A deleted current key restarts the walk: bound it so that a churning map still ends.
  uint64_t limit = 4 * uint64_t(info.max_entries) + 16;
  for (bool first = true; limit-- > 0; first = false) {
    union bpf_attr attr {};
    attr.map_fd = fd;
    attr.key = first ? 0 : bpf_ptr(cur);
    attr.next_key = bpf_ptr(next);
    if (sys_bpf(BPF_MAP_GET_NEXT_KEY, attr) != 0)
      return errno == ENOENT ? 0 : errno;
    std::swap(cur, next);
    attr = {};
    attr.map_fd = fd;
    attr.key = bpf_ptr(cur);
    attr.value = bpf_ptr(scratch.values.data());
    if (sys_bpf(BPF_MAP_LOOKUP_ELEM, attr) == 0)
      placer.place(cur, scratch.values.data());
    else if (errno != ENOENT) // deleted since: skip it
      return errno;
  }
  return 0;
}

} // namespace

// The entry of key 0, if there is one; 0 or an errno.
static int read_scalar(int fd, const HostMapLayout &l, Placer &placer) {
  thread_local std::vector<uint8_t> value;
  value.resize(l.host_value_size);
  uint64_t key = 0;
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.map_fd = fd;
  attr.key = reinterpret_cast<uintptr_t>(&key);
  attr.value = reinterpret_cast<uintptr_t>(value.data());
  if (sys_bpf(BPF_MAP_LOOKUP_ELEM, attr) != 0)
    return errno == ENOENT ? 0 : errno;
  placer.place(reinterpret_cast<const uint8_t *>(&key), value.data());
  return 0;
}

Result<uint64_t> snapshot_host_map(int bpf_map_fd, const HostMapLayout &layout,
                                   std::vector<uint8_t> &image) {
  auto info = checked_map_info(bpf_map_fd, layout);
  if (!info)
    return Error{info.error()};
  const auto &d = layout.device;
  image.assign(d.storage_size(), 0);
  Placer placer(d, image.data(), layout.host_key_size, layout.host_value_size);
  int err = 0;
  if (d.key_size == 0 && layout.host_key_size == 8) {
    // A scalar map has the one key 0: a lookup, where a batch read walks every bucket (~10 us
    // for a 4096-entry hash map, on every traced launch).
    err = read_scalar(bpf_map_fd, layout, placer);
  } else {
    err = read_batched(bpf_map_fd, layout, *info, placer);
    if (err < 0)
      err = read_one_by_one(bpf_map_fd, layout, *info, placer);
  }
  if (err > 0) {
    errno = err;
    return bpf_error(bpf_map_fd, "reading entries");
  }
  abi::DeviceMapSpec header_only = d; // placed entries, not prefilled ones
  header_only.prefilled = false;
  abi::init_device_map_table(header_only, image.data(), placer.drops());
  return placer.entries();
}

} // namespace gpubt::agent
