// Gathers the READY entries' host-sized keys and values into per-thread arrays, then one
// BPF_MAP_UPDATE_BATCH call per run of entries that the kernel accepts.
#include "runtime/cuda_agent/host_map_writeback.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/abi/device_map_table.h"

namespace gpubt::agent {
namespace {

// Kept per thread so that a write back after every launch allocates nothing once grown.
struct Scratch {
  std::vector<uint8_t> keys, values;
};
thread_local Scratch scratch;

Error image_error(int fd, const std::string &why) {
  return make_error("device map image for host map (fd " + std::to_string(fd) + "): " + why);
}

Status check_image(int fd, const HostMapLayout &l, const uint8_t *image, size_t size) {
  const auto &d = l.device;
  if (d.key_size == 0 && d.capacity != 1)
    return image_error(fd, "a scalar map striped over " + std::to_string(d.capacity) +
                               " entries must be merged, not written back");
  if (std::string why = abi::device_map_table_error(d, image, size); !why.empty())
    return image_error(fd, why);
  return Ok{};
}

// The READY entries' keys and values, host-sized, packed into scratch. Returns their number.
uint32_t gather(const HostMapLayout &l, const uint8_t *image) {
  const auto &d = l.device;
  size_t ks = l.host_key_size, vs = l.host_value_size;
  if (scratch.keys.size() < d.capacity * ks)
    scratch.keys.resize(d.capacity * ks);
  if (scratch.values.size() < d.capacity * vs)
    scratch.values.resize(d.capacity * vs);
  uint32_t n = 0;
  abi::for_each_ready_slot(d, image, [&](const uint8_t *key, const uint8_t *value) {
    if (d.key_size != 0)
      std::memcpy(scratch.keys.data() + n * ks, key, ks);
    else // the scalar key 0
      std::memset(scratch.keys.data() + n * ks, 0, ks);
    std::memcpy(scratch.values.data() + n * vs, value, vs);
    ++n;
  });
  return n;
}

bool no_batch_op(int err) {
  return err == EINVAL || err == EOPNOTSUPP || err == ENOTSUP || err == 524 /*ENOTSUPP*/;
}

struct Written {
  uint64_t ok = 0, full = 0;
  int err = 0; // an errno other than E2BIG; -1: the map type has no batch update
};

// Entries [0, N) of scratch; an entry that does not fit (E2BIG) is skipped and counted.
Written update_batched(int fd, const HostMapLayout &l, uint32_t n) {
  Written w;
  for (uint32_t at = 0; at < n;) {
    union bpf_attr attr {};
    attr.batch.keys = bpf_ptr(scratch.keys.data() + size_t(at) * l.host_key_size);
    attr.batch.values = bpf_ptr(scratch.values.data() + size_t(at) * l.host_value_size);
    uint32_t asked = n - at;
    attr.batch.count = asked;
    attr.batch.elem_flags = BPF_ANY;
    attr.batch.map_fd = fd;
    int err = sys_bpf(BPF_MAP_UPDATE_BATCH, attr) == 0 ? 0 : errno;
    // Those before the failing entry; a call refused before the first entry leaves count as
    // it was (ENOTSUPP: the map type has no batch update).
    uint32_t done = attr.batch.count;
    if (err != 0 && done >= asked)
      done = 0;
    if (err != 0 && at == 0 && done == 0 && no_batch_op(err))
      return {0, 0, -1};
    w.ok += done;
    at += done;
    if (err == 0)
      continue;
    if (err != E2BIG) {
      w.err = err;
      return w;
    }
    ++w.full;
    ++at;
  }
  return w;
}

Written update_one_by_one(int fd, const HostMapLayout &l, uint32_t n) {
  Written w;
  for (uint32_t i = 0; i < n; ++i) {
    union bpf_attr attr {};
    attr.map_fd = fd;
    attr.key = bpf_ptr(scratch.keys.data() + size_t(i) * l.host_key_size);
    attr.value = bpf_ptr(scratch.values.data() + size_t(i) * l.host_value_size);
    attr.flags = BPF_ANY;
    if (sys_bpf(BPF_MAP_UPDATE_ELEM, attr) == 0) {
      ++w.ok;
    } else if (errno == E2BIG) {
      ++w.full;
    } else {
      w.err = errno;
      return w;
    }
  }
  return w;
}

} // namespace

Result<uint64_t> write_back_device_map(int bpf_map_fd, const HostMapLayout &layout,
                                       const uint8_t *image, size_t size,
                                       uint64_t *not_written) {
  if (not_written)
    *not_written = 0;
  auto info = checked_map_info(bpf_map_fd, layout);
  if (!info)
    return Error{info.error()};
  if (auto st = check_image(bpf_map_fd, layout, image, size); !st)
    return Error{st.error()};
  uint32_t n = gather(layout, image);
  Written w = update_batched(bpf_map_fd, layout, n);
  if (w.err < 0)
    w = update_one_by_one(bpf_map_fd, layout, n);
  if (w.err > 0) {
    errno = w.err;
    return bpf_error(bpf_map_fd, "writing entries");
  }
  if (w.full > 0) {
    if (not_written)
      *not_written = w.full;
    return make_error("host map (fd " + std::to_string(bpf_map_fd) + "): full, " +
                      std::to_string(w.full) + " of " + std::to_string(n) +
                      " entries did not fit (E2BIG), " + std::to_string(w.ok) + " written");
  }
  return w.ok;
}

} // namespace gpubt::agent
