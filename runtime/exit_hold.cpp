// The exit hold (see exit_hold.h): four hand-assembled BPF instructions, no compiler needed.
#include "runtime/exit_hold.h"
#include "runtime/attach.h"
#include "runtime/loader.h"
#include "runtime/symbolizer.h"
#include <csignal>
#include <linux/bpf.h>
#include <sys/wait.h>

namespace gpubt::runtime {
namespace {

uint64_t insn(uint8_t code, uint8_t dst, int32_t imm) {
  return uint64_t(code) | uint64_t(dst) << 8 | uint64_t(uint32_t(imm)) << 32;
}

} // namespace

Result<std::vector<UniqueFd>> hold_at_exit(int pid) {
  abi::ProbeSpec p;
  p.name = "uprobe:libc:exit";
  p.kind = abi::AttachKind::Uprobe;
  p.target = "libc";
  p.func = "exit";
  p.hidden = true;
  p.insns = {
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, SIGSTOP),
      insn(BPF_JMP | BPF_CALL, 0, BPF_FUNC_send_signal),
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0),
      insn(BPF_JMP | BPF_EXIT, 0, 0),
  };
  auto prog = load_program(p, {});
  if (!prog)
    return make_error(prog.error());
  std::vector<std::string> probe_names; // the cookies go unused: the program reads none
  FunctionNames names;
  names.probe_names = &probe_names;
  auto att = attach_probe(p, prog->get(), pid, names);
  if (!att)
    return make_error(att.error());
  std::vector<UniqueFd> fds;
  fds.push_back(std::move(*prog));
  for (auto &fd : att->fds)
    fds.push_back(std::move(fd));
  return fds;
}

bool release_held(int pid) {
  siginfo_t info{};
  if (waitid(P_PID, pid, &info, WSTOPPED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid ||
      info.si_code != CLD_STOPPED)
    return false;
  snapshot_process_maps(pid);
  // Consume the stop notification, then continue.
  waitid(P_PID, pid, &info, WSTOPPED | WNOHANG);
  kill(pid, SIGCONT);
  return true;
}

} // namespace gpubt::runtime
