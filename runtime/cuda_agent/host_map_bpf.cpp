// A BPF map's key/value sizes and type against a HostMapLayout, through BPF_OBJ_GET_INFO_BY_FD.
#include "runtime/cuda_agent/host_map_bpf.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gpubt::agent {
namespace {

bool is_percpu(uint32_t type) {
  switch (type) {
  case BPF_MAP_TYPE_PERCPU_HASH:
  case BPF_MAP_TYPE_PERCPU_ARRAY:
  case BPF_MAP_TYPE_LRU_PERCPU_HASH:
  case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
    return true;
  default:
    return false;
  }
}

Status check_layout(int fd, const HostMapLayout &l, const bpf_map_info &info) {
  const auto &d = l.device;
  auto fail = [&](const std::string &why) {
    return make_error("host map (fd " + std::to_string(fd) + "): " + why);
  };
  if (is_percpu(info.type))
    return fail("a per-CPU map cannot be copied to or from the GPU");
  if (info.key_size != l.host_key_size || info.value_size != l.host_value_size)
    return fail("key/value size " + std::to_string(info.key_size) + "/" +
                std::to_string(info.value_size) + ", expected " +
                std::to_string(l.host_key_size) + "/" + std::to_string(l.host_value_size));
  bool sizes = d.key_size % 8 == 0 && d.value_size % 8 == 0 &&
               d.entry_size == 8 + d.key_size + d.value_size &&
               (d.key_size == 0 || d.key_size >= l.host_key_size) &&
               d.value_size >= l.host_value_size;
  if (d.capacity == 0 || (d.capacity & (d.capacity - 1)) != 0 || !sizes)
    return fail("bad device layout (capacity " + std::to_string(d.capacity) + ", key " +
                std::to_string(d.key_size) + ", value " + std::to_string(d.value_size) +
                ", entry " + std::to_string(d.entry_size) + ")");
  return Ok{};
}

} // namespace

long sys_bpf(int cmd, union bpf_attr &attr) {
  return syscall(__NR_bpf, cmd, &attr, sizeof(attr));
}

Error bpf_error(int fd, const char *what) {
  return make_error("host map (fd " + std::to_string(fd) + "): " + what + ": " +
                    std::strerror(errno));
}

Result<bpf_map_info> checked_map_info(int fd, const HostMapLayout &layout) {
  bpf_map_info info{};
  union bpf_attr attr {};
  attr.info.bpf_fd = fd;
  attr.info.info_len = sizeof(info);
  attr.info.info = bpf_ptr(&info);
  if (fd < 0)
    errno = EBADF;
  if (fd < 0 || sys_bpf(BPF_OBJ_GET_INFO_BY_FD, attr) != 0)
    return bpf_error(fd, "not a BPF map");
  if (auto st = check_layout(fd, layout, info); !st)
    return Error{st.error()};
  return info;
}

} // namespace gpubt::agent
