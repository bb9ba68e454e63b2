// Map snapshots and updates through bpf_map_get_next_key / lookup / update / delete.
#include "runtime/bpf/map_ops.h"
#include <algorithm>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <linux/bpf.h>
#include <set>

namespace gpubt::runtime {
namespace {

size_t ncpus() {
  static const int n = libbpf_num_possible_cpus();
  return n > 0 ? n : 1;
}

size_t round8(size_t n) { return (n + 7) & ~size_t(7); }

// The buffer a lookup/update of one key takes.
size_t value_buffer_size(const abi::MapSpec &spec) {
  return is_percpu_map(spec.bpf_type) ? round8(spec.value_size) * ncpus() : spec.value_size;
}

bool is_array_map(uint32_t t) { return t == BPF_MAP_TYPE_ARRAY || t == BPF_MAP_TYPE_PERCPU_ARRAY; }

bool is_readable_map(uint32_t t) {
  return t != BPF_MAP_TYPE_RINGBUF && t != BPF_MAP_TYPE_PERF_EVENT_ARRAY &&
         t != BPF_MAP_TYPE_STACK_TRACE;
}

std::vector<std::vector<uint8_t>> all_keys(int fd, const abi::MapSpec &spec) {
  std::vector<std::vector<uint8_t>> keys;
  std::vector<uint8_t> key(spec.key_size), next(spec.key_size);
  const void *prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
    keys.push_back(next);
    key = next;
    prev = key.data();
  }
  return keys;
}

} // namespace

bool is_percpu_map(uint32_t t) {
  return t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY ||
         t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

MapData read_map(int fd, const abi::MapSpec &spec) {
  MapData out;
  if (!is_readable_map(spec.bpf_type))
    return out;
  bool percpu = is_percpu_map(spec.bpf_type);
  std::vector<uint8_t> buf(value_buffer_size(spec));
  for (auto &key : all_keys(fd, spec)) {
    if (bpf_map_lookup_elem(fd, key.data(), buf.data()) != 0)
      continue; // deleted since we listed it
    MapEntry e;
    e.key = std::move(key);
    if (percpu) {
      size_t stride = round8(spec.value_size);
      for (size_t c = 0; c < ncpus(); ++c)
        e.values.emplace_back(buf.begin() + c * stride, buf.begin() + c * stride + spec.value_size);
    } else {
      e.values.push_back(buf);
    }
    out.push_back(std::move(e));
  }
  return out;
}

void clear_map(int fd, const abi::MapSpec &spec) {
  if (is_array_map(spec.bpf_type))
    return zero_map(fd, spec);
  for (auto &key : all_keys(fd, spec))
    bpf_map_delete_elem(fd, key.data());
}

void zero_map(int fd, const abi::MapSpec &spec) {
  std::vector<uint8_t> zero(value_buffer_size(spec), 0);
  for (auto &key : all_keys(fd, spec))
    bpf_map_update_elem(fd, key.data(), zero.data(), BPF_EXIST);
}

Result<uint64_t> replace_map_rows(int fd, const abi::MapSpec &spec, const MapData &rows) {
  std::set<std::vector<uint8_t>> keep;
  for (const auto &e : rows)
    keep.insert(e.key);
  for (auto &key : all_keys(fd, spec))
    if (!keep.count(key))
      bpf_map_delete_elem(fd, key.data());
  std::vector<uint8_t> buf(value_buffer_size(spec));
  uint64_t refused = 0;
  for (const auto &e : rows) {
    if (e.key.size() != spec.key_size || e.values.empty())
      return make_error("BUG: a row of " + spec.name + " does not fit its BPF map");
    std::fill(buf.begin(), buf.end(), 0);
    std::memcpy(buf.data(), e.values[0].data(),
                std::min<size_t>(e.values[0].size(), spec.value_size));
    if (bpf_map_update_elem(fd, e.key.data(), buf.data(), BPF_ANY) == 0)
      continue;
    if (errno != E2BIG && errno != ENOMEM)
      return make_error("failed to write " + spec.name + " into its BPF map: " + strerror(errno));
    ++refused;
  }
  return refused;
}

Status write_globals(int fd, const abi::MapSpec &spec, uint64_t start_ns, uint64_t child_pid) {
  std::vector<uint8_t> buf(value_buffer_size(spec), 0);
  size_t stride = is_percpu_map(spec.bpf_type) ? round8(spec.value_size) : spec.value_size;
  uint64_t words[abi::GlobalSlotCount] = {};
  words[abi::GlobalStartNs] = start_ns;
  words[abi::GlobalChildPid] = child_pid;
  size_t n = std::min<size_t>(sizeof(words), spec.value_size);
  for (size_t off = 0; off + stride <= buf.size(); off += stride)
    memcpy(buf.data() + off, words, n);
  uint32_t key = 0;
  std::vector<uint8_t> k(spec.key_size, 0);
  memcpy(k.data(), &key, std::min<size_t>(sizeof(key), k.size()));
  if (bpf_map_update_elem(fd, k.data(), buf.data(), BPF_ANY) != 0)
    return make_error(std::string("failed to write the globals map: ") + strerror(errno));
  return Ok{};
}

} // namespace gpubt::runtime
