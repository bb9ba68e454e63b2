// capget(2) directly: one question does not need libcap.
#include "runtime/bpf/privileges.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool has_effective(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0)
    return false;
  return data[cap / 32].effective & (1u << (cap % 32));
}

} // namespace

Status check_bpf_privileges() {
  if (geteuid() == 0 || (has_effective(CAP_BPF) && has_effective(CAP_PERFMON)))
    return Ok{};
  return make_error("gpubt needs to run as root, or with the CAP_BPF and CAP_PERFMON "
                    "capabilities, to load BPF programs and attach probes");
}

} // namespace gpubt::runtime
