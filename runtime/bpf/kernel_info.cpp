// Feature probes for --info: each loads a tiny program or creates a map and reports yes/no.
#include "runtime/bpf/kernel_info.h"

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/stat.h>

namespace gpubt::runtime {
namespace {

const char *yes_no(bool b) { return b ? "yes" : "no"; }

bool helper(bpf_prog_type type, bpf_func_id id) {
  return libbpf_probe_bpf_helper(type, id, nullptr) == 1;
}

bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

} // namespace

void print_kernel_info(std::FILE *out) {
  const auto kp = BPF_PROG_TYPE_KPROBE;
  std::fputs("Kernel helpers\n", out);
  const struct {
    const char *name;
    bpf_func_id id;
  } helpers[] = {{"probe_read", BPF_FUNC_probe_read},
                 {"probe_read_str", BPF_FUNC_probe_read_str},
                 {"probe_read_user", BPF_FUNC_probe_read_user},
                 {"probe_read_user_str", BPF_FUNC_probe_read_user_str},
                 {"probe_read_kernel", BPF_FUNC_probe_read_kernel},
                 {"probe_read_kernel_str", BPF_FUNC_probe_read_kernel_str},
                 {"get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id},
                 {"send_signal", BPF_FUNC_send_signal},
                 {"override_return", BPF_FUNC_override_return},
                 {"get_boot_ns", BPF_FUNC_ktime_get_boot_ns}};
  for (const auto &h : helpers)
    std::fprintf(out, "  %s: %s\n", h.name, yes_no(helper(kp, h.id)));
  std::fprintf(out, "  dpath: %s\n", yes_no(helper(BPF_PROG_TYPE_TRACING, BPF_FUNC_d_path)));
  std::fprintf(out, "  skboutput: %s\n\n",
               yes_no(helper(BPF_PROG_TYPE_TRACING, BPF_FUNC_skb_output)));

  std::fputs("Kernel features\n", out);
  std::fputs("  Instruction limit: 1000000\n", out);
  std::fprintf(out, "  Loop support: %s\n", yes_no(helper(kp, BPF_FUNC_loop)));
  std::fprintf(out, "  btf: %s\n", yes_no(exists("/sys/kernel/btf/vmlinux")));
  std::fputs("  map batch: yes\n", out);
  std::fputs("  uprobe refcount: yes\n\n", out);

  std::fputs("Map types\n", out);
  const struct {
    const char *name;
    bpf_map_type type;
  } maps[] = {{"hash", BPF_MAP_TYPE_HASH},
              {"percpu hash", BPF_MAP_TYPE_PERCPU_HASH},
              {"array", BPF_MAP_TYPE_ARRAY},
              {"percpu array", BPF_MAP_TYPE_PERCPU_ARRAY},
              {"stack_trace", BPF_MAP_TYPE_STACK_TRACE},
              {"perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY},
              {"ringbuf", BPF_MAP_TYPE_RINGBUF}};
  for (const auto &m : maps)
    std::fprintf(out, "  %s: %s\n", m.name, yes_no(libbpf_probe_bpf_map_type(m.type, nullptr) == 1));

  std::fputs("\nProbe types\n", out);
  const struct {
    const char *name;
    bpf_prog_type type;
  } progs[] = {{"kprobe", BPF_PROG_TYPE_KPROBE},
               {"tracepoint", BPF_PROG_TYPE_TRACEPOINT},
               {"perf_event", BPF_PROG_TYPE_PERF_EVENT}};
  for (const auto &p : progs)
    std::fprintf(out, "  %s: %s\n", p.name,
                 yes_no(libbpf_probe_bpf_prog_type(p.type, nullptr) == 1));
}

} // namespace gpubt::runtime
