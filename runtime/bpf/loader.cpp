// Map creation and program loading through libbpf's low-level API.
#include "runtime/bpf/loader.h"
#include "runtime/process/fd_limit.h"
#include "runtime/bpf/func_info.h"
#include "runtime/bpf/uprobe_multi.h"
#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <linux/bpf.h>

namespace gpubt::runtime {
namespace {

std::string sanitize(const std::string &in) {
  std::string out;
  for (char c : in) {
    if (out.size() == BPF_OBJ_NAME_LEN - 1)
      break;
    out += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  return out;
}

Result<std::vector<bpf_insn>> patch_map_fds(const abi::ProbeSpec &probe,
                                            const std::vector<UniqueFd> &maps) {
  static_assert(sizeof(bpf_insn) == sizeof(uint64_t));
  std::vector<bpf_insn> insns(probe.insns.size());
  memcpy(insns.data(), probe.insns.data(), probe.insns.size() * sizeof(bpf_insn));
  for (size_t i = 0; i < insns.size(); ++i) {
    bpf_insn &in = insns[i];
    if (in.code != (BPF_LD | BPF_IMM | BPF_DW))
      continue;
    if (in.src_reg == BPF_PSEUDO_MAP_FD || in.src_reg == BPF_PSEUDO_MAP_VALUE) {
      if (in.imm < 0 || static_cast<size_t>(in.imm) >= maps.size())
        return make_error(fmt::format("BUG: {}: instruction {} references map {} of {}", probe.name,
                                      i, in.imm, maps.size()));
      in.imm = maps[in.imm].get();
    }
    ++i; // ld_imm64 takes two slots
  }
  return insns;
}

} // namespace

std::string bpf_map_name(const std::string &name) {
  std::string n = name;
  if (!n.empty() && n[0] == '@')
    n = "AT_" + n.substr(1);
  return sanitize(n);
}

Result<std::vector<UniqueFd>> create_maps(const abi::ProgramSpec &spec) {
  std::vector<UniqueFd> fds;
  for (const auto &m : spec.maps) {
    auto type = static_cast<bpf_map_type>(m.bpf_type);
    int fd = bpf_map_create(type, bpf_map_name(m.name).c_str(), m.key_size, m.value_size,
                            m.max_entries, nullptr);
    if (fd < 0)
      return make_error(fmt::format("failed to create map {} (type {}, key {}, value {}, "
                                    "entries {}): {}",
                                    m.name, m.bpf_type, m.key_size, m.value_size, m.max_entries,
                                    error_text(-fd)));
    fds.emplace_back(fd);
  }
  return fds;
}

unsigned prog_type_for(abi::AttachKind kind) {
  switch (kind) {
  case abi::AttachKind::Tracepoint:
    return BPF_PROG_TYPE_TRACEPOINT;
  case abi::AttachKind::Interval:
  case abi::AttachKind::Profile:
  case abi::AttachKind::Software:
  case abi::AttachKind::Hardware:
  case abi::AttachKind::Watchpoint:
    return BPF_PROG_TYPE_PERF_EVENT;
  case abi::AttachKind::Begin:
  case abi::AttachKind::End:
  case abi::AttachKind::Hang:
  case abi::AttachKind::LaunchEnd:
    return BPF_PROG_TYPE_RAW_TRACEPOINT; // run by BPF_PROG_TEST_RUN (triggers.h)
  default:
    return BPF_PROG_TYPE_KPROBE;
  }
}

Result<UniqueFd> load_program(const abi::ProbeSpec &probe, const std::vector<UniqueFd> &maps) {
  auto insns = patch_map_fds(probe, maps);
  if (!insns)
    return make_error(insns.error());
  auto type = static_cast<bpf_prog_type>(prog_type_for(probe.kind));
  std::string name = sanitize(probe.name);
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  bool uprobe = probe.kind == abi::AttachKind::Uprobe || probe.kind == abi::AttachKind::Uretprobe;
  if (uprobe && uprobe_multi_supported())
    opts.expected_attach_type = static_cast<bpf_attach_type>(bpf_trace_uprobe_multi);
  if (probe.sleepable)
    opts.prog_flags |= BPF_F_SLEEPABLE;
  auto funcs = func_info_for(*insns);
  if (!funcs)
    return make_error(funcs.error());
  if (funcs->btf.valid()) {
    opts.prog_btf_fd = funcs->btf.get();
    opts.func_info = funcs->info.data();
    opts.func_info_cnt = static_cast<uint32_t>(funcs->info.size());
    opts.func_info_rec_size = sizeof(bpf_func_info);
  }
  int fd = bpf_prog_load(type, name.c_str(), "GPL", insns->data(), insns->size(), &opts);
  if (fd >= 0)
    return UniqueFd(fd);

  int err = -fd;
  std::string log;
  for (size_t size = 1 << 20; size <= (size_t(1) << 28); size *= 4) {
    std::vector<char> buf(size);
    opts.log_buf = buf.data();
    opts.log_size = buf.size();
    opts.log_level = 1;
    fd = bpf_prog_load(type, name.c_str(), "GPL", insns->data(), insns->size(), &opts);
    if (fd >= 0) // accepted with a log buffer: a flaky first failure, keep the program
      return UniqueFd(fd);
    log = buf.data();
    if (-fd != ENOSPC)
      break;
  }
  return make_error(
      fmt::format("Error loading BPF program for {}: {}\n{}", probe.name, error_text(err), log));
}

} // namespace gpubt::runtime
