// Real BPF maps for the host map snapshot and write back tests: created with bpf(2), filled,
// read back whole; byte helpers and the device layout of a host map.
#pragma once
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "runtime/cuda_agent/host_map_bpf.h"

namespace gpubt::agent::test {

using Bytes = std::vector<uint8_t>;
using Entries = std::map<Bytes, Bytes>;

inline long bpf(int cmd, union bpf_attr &attr) {
  return syscall(__NR_bpf, cmd, &attr, sizeof(attr));
}

class MapFd {
public:
  MapFd(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
        uint32_t flags = 0)
      : key_size_(key_size), value_size_(value_size) {
    union bpf_attr attr {};
    attr.map_type = type;
    attr.key_size = key_size;
    attr.value_size = value_size;
    attr.max_entries = max_entries;
    attr.map_flags = flags;
    fd_ = int(bpf(BPF_MAP_CREATE, attr));
  }
  MapFd(const MapFd &) = delete;
  MapFd &operator=(const MapFd &) = delete;
  ~MapFd() {
    if (fd_ >= 0)
      close(fd_);
  }
  int fd() const { return fd_; }
  void put(const Bytes &key, const Bytes &value) const {
    union bpf_attr attr {};
    attr.map_fd = fd_;
    attr.key = uintptr_t(key.data());
    attr.value = uintptr_t(value.data());
    ASSERT_EQ(bpf(BPF_MAP_UPDATE_ELEM, attr), 0) << strerror(errno);
  }
  // Every entry, by GET_NEXT_KEY and LOOKUP_ELEM.
  Entries dump() const {
    Entries out;
    Bytes cur(key_size_), next(key_size_), value(value_size_);
    for (bool first = true;; first = false) {
      union bpf_attr attr {};
      attr.map_fd = fd_;
      attr.key = first ? 0 : uintptr_t(cur.data());
      attr.next_key = uintptr_t(next.data());
      if (bpf(BPF_MAP_GET_NEXT_KEY, attr) != 0)
        break;
      cur = next;
      attr = {};
      attr.map_fd = fd_;
      attr.key = uintptr_t(cur.data());
      attr.value = uintptr_t(value.data());
      if (bpf(BPF_MAP_LOOKUP_ELEM, attr) == 0)
        out[cur] = value;
    }
    return out;
  }

private:
  int fd_ = -1;
  uint32_t key_size_, value_size_;
};

template <class T> Bytes bytes_of(const T &v) {
  Bytes b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

// A 16-byte tuple key (u64, i32 and padding) and a 16-byte tuple value.
struct TupleKey {
  uint64_t pid;
  int32_t cpu;
  uint32_t pad;
};
struct PairValue {
  int64_t a, b;
};
static_assert(sizeof(TupleKey) == 16);

inline uint32_t round8(uint32_t n) { return (n + 7) / 8 * 8; }

inline HostMapLayout layout(uint32_t key_size, uint32_t value_size, uint32_t capacity,
                            bool scalar = false) {
  HostMapLayout l;
  l.host_key_size = key_size;
  l.host_value_size = value_size;
  l.device.capacity = capacity;
  l.device.key_size = scalar ? 0 : round8(key_size);
  l.device.value_size = round8(value_size);
  l.device.entry_size = 8 + l.device.key_size + l.device.value_size;
  return l;
}

} // namespace gpubt::agent::test
