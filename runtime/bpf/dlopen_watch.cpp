// The load watch (see dlopen_watch.h): a hand-assembled BPF program, as for the exit hold.
#include "runtime/bpf/dlopen_watch.h"
#include "runtime/bpf/attach.h"
#include "runtime/process/binary_paths.h"
#include "runtime/bpf/exit_hold.h"
#include "runtime/bpf/loader.h"
#include <algorithm>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <linux/bpf.h>

namespace gpubt::runtime {
namespace {

uint64_t insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  return uint64_t(code) | uint64_t(dst & 0xf) << 8 | uint64_t(src & 0xf) << 12 |
         uint64_t(uint16_t(off)) << 16 | uint64_t(uint32_t(imm)) << 32;
}

// bpf_ringbuf_output(map 0, &zero, 8, BPF_RB_FORCE_WAKEUP); bpf_send_signal(SIGSTOP).
std::vector<uint64_t> stop_and_wake_insns() {
  return {
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),
      insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, -8, 0),
      insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, 0), // map index 0
      insn(0, 0, 0, 0, 0),
      insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
      insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 8),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_RB_FORCE_WAKEUP),
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, SIGSTOP),
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_send_signal),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
      insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
}

int count_load(void *ctx, void *, size_t) {
  ++*static_cast<size_t *>(ctx);
  return 0;
}

} // namespace

Result<std::unique_ptr<LoadWatch>> LoadWatch::start(int pid, const std::string &exe) {
  std::string interp =
      program_interpreter(exe.empty() ? "/proc/" + std::to_string(pid) + "/exe" : exe);
  if (interp.empty())
    interp = program_interpreter("/proc/self/exe");
  if (interp.empty())
    return make_error("no dynamic linker to watch library loads in");
  std::unique_ptr<LoadWatch> w(new LoadWatch());
  int map = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "gpubt_loads", 0, 0, 4096, nullptr);
  if (map < 0)
    return make_error(std::string("failed to create the load watch's ring buffer: ") +
                      strerror(errno));
  w->fds_.emplace_back(map);
  w->rb_ = ring_buffer__new(map, count_load, &w->loads_, nullptr);
  if (!w->rb_)
    return make_error(std::string("failed to open the load watch's ring buffer: ") +
                      strerror(errno));
  abi::ProbeSpec p;
  p.name = "uprobe:" + interp + ":_dl_debug_state";
  p.kind = abi::AttachKind::Uprobe;
  p.target = interp;
  p.func = "_dl_debug_state";
  p.hidden = true;
  p.insns = stop_and_wake_insns();
  auto prog = load_program(p, w->fds_);
  if (!prog)
    return make_error(prog.error());
  std::vector<std::string> probe_names; // the program reads no cookie
  FunctionNames names;
  names.probe_names = &probe_names;
  auto att = attach_probe(p, prog->get(), pid, names);
  if (!att)
    return make_error(att.error());
  if (att->count == 0)
    return make_error("no _dl_debug_state in " + interp);
  w->fds_.push_back(std::move(*prog));
  for (auto &fd : att->fds)
    w->fds_.push_back(std::move(fd));
  return w;
}

LoadWatch::~LoadWatch() {
  if (rb_)
    ring_buffer__free(rb_);
}

int LoadWatch::epoll_fd() const { return ring_buffer__epoll_fd(rb_); }

bool LoadWatch::take_loads() {
  size_t before = loads_;
  ring_buffer__consume(rb_);
  return loads_ != before;
}

bool wait_until_stopped(int pid, int timeout_ms) {
  timespec nap{0, 20000};
  for (long waited_us = 0;; waited_us += nap.tv_nsec / 1000) {
    char state = process_state(pid);
    if (state == 'T')
      return true;
    if (state == '?' || state == 'Z' || state == 'X' || waited_us >= timeout_ms * 1000L)
      return false;
    nanosleep(&nap, nullptr);
    nap.tv_nsec = std::min(nap.tv_nsec * 2, 1000000L);
  }
}

} // namespace gpubt::runtime
