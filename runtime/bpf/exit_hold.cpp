// The exit hold (see exit_hold.h): four hand-assembled BPF instructions, no compiler needed.
#include "runtime/bpf/exit_hold.h"
#include "runtime/bpf/attach.h"
#include "runtime/process/object_symbols.h"
#include "runtime/bpf/loader.h"
#include "runtime/process/symbolizer.h"
#include <csignal>
#include <fstream>
#include <iterator>
#include <linux/bpf.h>
#include <string>

namespace gpubt::runtime {
namespace {

uint64_t insn(uint8_t code, uint8_t dst, int32_t imm) {
  return uint64_t(code) | uint64_t(dst) << 8 | uint64_t(uint32_t(imm)) << 32;
}

} // namespace

Result<std::vector<UniqueFd>> hold_at_exit(int pid) { return hold_at(pid, "libc", "exit"); }

Result<std::vector<UniqueFd>> hold_at(int pid, const std::string &target, const std::string &func) {
  abi::ProbeSpec p;
  p.name = "uprobe:" + target + ":" + func;
  p.kind = abi::AttachKind::Uprobe;
  p.target = target;
  p.func = func;
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

// The state letter of /proc/PID/stat ("T" when stopped): -p targets are not our children, so
// waitid cannot see their stops.
char process_state(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')'); // comm may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

bool release_held(int pid) {
  if (process_state(pid) != 'T')
    return false;
  snapshot_process_maps(pid);
  remember_file_mappings(pid);
  kill(pid, SIGCONT);
  return true;
}

} // namespace gpubt::runtime
