// Raw BPF_LINK_CREATE for uprobe_multi: the installed libbpf (1.1) predates it.
#include "runtime/bpf/uprobe_multi.h"
#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gpubt::runtime {
namespace {

// union bpf_attr's link_create with the uprobe_multi member (include/uapi/linux/bpf.h).
struct LinkCreateUprobeMulti {
  uint32_t prog_fd, target_fd, attach_type, flags;
  uint64_t path, offsets, ref_ctr_offsets, cookies;
  uint32_t cnt, multi_flags, pid;
};
constexpr uint32_t uprobe_multi_return = 1; // BPF_F_UPROBE_MULTI_RETURN

bool probe_support() {
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; // r0 = 0
  insns[1].code = BPF_JMP | BPF_EXIT;
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  opts.expected_attach_type = static_cast<bpf_attach_type>(bpf_trace_uprobe_multi);
  int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gpubt_probe", "GPL", insns, 2, &opts);
  if (fd < 0)
    return false;
  close(fd);
  return true;
}

} // namespace

bool uprobe_multi_supported() {
  static const bool supported = probe_support();
  return supported;
}

Result<UniqueFd> attach_uprobe_multi(int prog_fd, const std::string &path,
                                     const std::vector<uint64_t> &offsets, bool retprobe, int pid,
                                     const std::vector<uint64_t> &cookies) {
  union {
    LinkCreateUprobeMulti lc;
    char pad[128];
  } attr;
  memset(&attr, 0, sizeof(attr));
  attr.lc.prog_fd = prog_fd;
  attr.lc.attach_type = bpf_trace_uprobe_multi;
  attr.lc.path = reinterpret_cast<uint64_t>(path.c_str());
  attr.lc.offsets = reinterpret_cast<uint64_t>(offsets.data());
  attr.lc.cnt = offsets.size();
  if (!cookies.empty())
    attr.lc.cookies = reinterpret_cast<uint64_t>(cookies.data());
  attr.lc.multi_flags = retprobe ? uprobe_multi_return : 0;
  attr.lc.pid = pid > 0 ? pid : 0;
  int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
  if (fd < 0)
    return make_error(strerror(errno));
  return UniqueFd(fd);
}

} // namespace gpubt::runtime
