// Test support for the BPF back end: script -> typed AST -> layout -> BpfArtifacts, and loading
// every program of a ProgramSpec into the running kernel's verifier (maps created, fds patched).
#pragma once
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/bpf/lower_bpf.h"
#include "codegen/bpf/lower_hang.h"
#include "runtime/bpf/func_info.h"
#include "tests/support/checked_script.h"

namespace gpubt::codegen::bpf::testing {

struct Compiled {
  std::string error; // parse/type errors or the lowering's error; empty on success
  BpfArtifacts art;
};


inline Compiled compile_script(const std::string &script, bool has_child = false,
                               BpfCodegenOptions opts = {}) {
  Compiled out;
  frontend::SemanticOptions so;
  so.has_child = has_child;
  so.field_type = [](const frontend::AttachPoint &ap, std::string_view field) {
    return ap.provider == frontend::Provider::GpuHang ? hang_arg_type(ap, field)
                                                      : tracepoint_arg_type(ap, field);
  };
  auto checked = gpubt::testing::check_script(script, so);
  if (!checked.error.empty()) {
    out.error = checked.error;
    return out;
  }
  opts.has_child = has_child;
  auto layout = layout::lay_out_program(*checked.prog, checked.sema, {});
  if (!layout) {
    out.error = layout.error();
    return out;
  }
  auto art = lower_to_bpf(*checked.prog, checked.sema, *layout, opts);
  if (!art) {
    out.error = art.error();
    return out;
  }
  out.art = std::move(*art);
  return out;
}

inline bpf_prog_type prog_type(abi::AttachKind k) {
  switch (k) {
  case abi::AttachKind::Tracepoint: return BPF_PROG_TYPE_TRACEPOINT;
  case abi::AttachKind::Interval: return BPF_PROG_TYPE_PERF_EVENT;
  default: return BPF_PROG_TYPE_KPROBE;
  }
}

// Loads every program of SPEC; returns the verifier's complaints ("" when all load). With
// STACK_DEPTHS, each program's "stack depth A+B+..." line (its function's and each callback's
// stack, as the verifier measured them) is appended there.
inline std::string load_in_kernel(const abi::ProgramSpec &spec,
                                  std::vector<std::string> *stack_depths = nullptr) {
  std::string failures;
  std::vector<int> fds;
  for (const auto &m : spec.maps) {
    int fd = bpf_map_create(static_cast<bpf_map_type>(m.bpf_type), nullptr, m.key_size,
                            m.value_size, m.max_entries, nullptr);
    if (fd < 0) {
      failures += "map " + m.name + ": " + strerror(errno) + "\n";
      for (int f : fds)
        close(f);
      return failures;
    }
    fds.push_back(fd);
  }
  static std::vector<char> log(4 << 20);
  for (const auto &p : spec.probes) {
    std::vector<uint64_t> insns = p.insns;
    for (size_t i = 0; i < insns.size(); ++i) {
      auto *in = reinterpret_cast<bpf_insn *>(&insns[i]);
      if (in->code != (BPF_LD | BPF_DW | BPF_IMM))
        continue;
      if (in->src_reg == BPF_PSEUDO_MAP_FD) {
        if (in->imm < 0 || size_t(in->imm) >= fds.size())
          failures += p.name + ": map index " + std::to_string(in->imm) + " out of range\n";
        else
          in->imm = fds[in->imm];
      }
      ++i;
    }
    log[0] = 0;
    LIBBPF_OPTS(bpf_prog_load_opts, lo, .prog_flags = p.sleepable ? BPF_F_SLEEPABLE : 0u,
                .log_level = stack_depths ? 4u /* BPF_LOG_STATS */ : 1u,
                .log_size = static_cast<uint32_t>(log.size()), .log_buf = log.data());
    // Loop callbacks need a BTF FUNC each, as the runtime's loader gives them.
    auto funcs = runtime::func_info_for(
        std::vector<bpf_insn>(reinterpret_cast<const bpf_insn *>(insns.data()),
                              reinterpret_cast<const bpf_insn *>(insns.data() + insns.size())));
    if (!funcs) {
      failures += p.name + ": " + funcs.error() + "\n";
      continue;
    }
    if (funcs->btf.valid()) {
      lo.prog_btf_fd = funcs->btf.get();
      lo.func_info = funcs->info.data();
      lo.func_info_cnt = static_cast<uint32_t>(funcs->info.size());
      lo.func_info_rec_size = sizeof(bpf_func_info);
    }
    int fd = bpf_prog_load(prog_type(p.kind), "gpubt_test", "GPL",
                           reinterpret_cast<const bpf_insn *>(insns.data()), insns.size(), &lo);
    if (fd < 0) {
      std::string l(log.data());
      if (l.size() > 6000)
        l = "..." + l.substr(l.size() - 6000);
      failures += p.name + ": " + strerror(errno) + "\n" + l + "\n";
    } else {
      close(fd);
      if (stack_depths) {
        std::string l(log.data());
        size_t at = l.find("stack depth ");
        stack_depths->push_back(at == l.npos ? "" : l.substr(at, l.find('\n', at) - at));
      }
    }
  }
  for (int f : fds)
    close(f);
  return failures;
}

} // namespace gpubt::codegen::bpf::testing
