// What host_map_snapshot and host_map_writeback share: a host map's layout on both sides and the
// raw bpf(2) calls that check a BPF map against it (the agent has no libbpf).
#pragma once
#include <linux/bpf.h>

#include <cstdint>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::agent {

struct HostMapLayout {
  uint32_t host_key_size = 0, host_value_size = 0; // the BPF map's (a scalar map's key: u64 0)
  abi::DeviceMapSpec device; // key_size >= host_key_size (0: scalar), value_size >= host's
};

long sys_bpf(int cmd, union bpf_attr &attr);
inline uint64_t bpf_ptr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

// "host map (fd FD): WHAT: strerror(errno)".
Error bpf_error(int fd, const char *what);

// FD's BPF_OBJ_GET_INFO_BY_FD, checked against LAYOUT: not per-CPU, the BPF map's key and value
// sizes are LAYOUT's host sizes, and the device layout is one device_abi.h describes.
Result<bpf_map_info> checked_map_info(int fd, const HostMapLayout &layout);

} // namespace gpubt::agent
