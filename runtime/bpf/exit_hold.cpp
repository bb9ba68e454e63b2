// The exit hold (see exit_hold.h): a few hand-assembled BPF instructions, no compiler needed.
#include "runtime/bpf/exit_hold.h"
#include "runtime/bpf/attach.h"
#include "runtime/process/fd_limit.h"
#include "runtime/process/object_symbols.h"
#include "runtime/bpf/loader.h"
#include "runtime/process/symbolizer.h"
#include <csignal>
#include <fstream>
#include <iterator>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <string>

namespace gpubt::runtime {
namespace {

uint64_t insn(uint8_t code, uint8_t dst, int32_t imm, uint8_t src = 0, int16_t off = 0) {
  return uint64_t(code) | uint64_t(dst) << 8 | uint64_t(src) << 12 |
         uint64_t(uint16_t(off)) << 16 | uint64_t(uint32_t(imm)) << 32;
}

// The end of every hold program: SIGSTOP this process, return 0.
void stop_and_exit(std::vector<uint64_t> &insns) {
  insns.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, SIGSTOP));
  insns.push_back(insn(BPF_JMP | BPF_CALL, 0, BPF_FUNC_send_signal));
  insns.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0));
  insns.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0));
}

// DST = the address of map 0's value (ld_imm64 takes two instructions), SRC = ADD, then
// *DST += SRC atomically; SRC gets the old value.
void fetch_add_counter(std::vector<uint64_t> &insns, int32_t add) {
  insns.push_back(insn(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, 0, BPF_PSEUDO_MAP_VALUE));
  insns.push_back(0); // offset 0 in the value
  insns.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, add));
  insns.push_back(insn(BPF_STX | BPF_DW | BPF_ATOMIC, BPF_REG_1, BPF_ADD | BPF_FETCH, BPF_REG_2));
}

// A hidden probe on FUNC in TARGET of INSNS.
abi::ProbeSpec hidden_probe(abi::AttachKind kind, const std::string &target,
                            const std::string &func, std::vector<uint64_t> insns) {
  abi::ProbeSpec p;
  p.name = (kind == abi::AttachKind::Uretprobe ? "uretprobe:" : "uprobe:") + target + ":" + func;
  p.kind = kind;
  p.target = target;
  p.func = func;
  p.hidden = true;
  p.insns = std::move(insns);
  return p;
}

// Loads P (reading MAPS) and attaches it to PID; appends the fds that keep it attached to FDS.
Status attach_hidden(const abi::ProbeSpec &p, const std::vector<UniqueFd> &maps, int pid,
                     std::vector<UniqueFd> &fds) {
  auto prog = load_program(p, maps);
  if (!prog)
    return make_error(prog.error());
  std::vector<std::string> probe_names; // the cookies go unused: the programs read none
  FunctionNames names;
  names.probe_names = &probe_names;
  auto att = attach_probe(p, prog->get(), pid, names);
  if (!att)
    return make_error(att.error());
  fds.push_back(std::move(*prog));
  for (auto &fd : att->fds)
    fds.push_back(std::move(fd));
  return Ok{};
}

} // namespace

Result<std::vector<UniqueFd>> hold_at_exit(int pid) { return hold_at(pid, "libc", "exit"); }

Result<std::vector<UniqueFd>> hold_at(int pid, const std::string &target, const std::string &func) {
  std::vector<uint64_t> insns;
  stop_and_exit(insns);
  std::vector<UniqueFd> fds;
  if (auto st = attach_hidden(hidden_probe(abi::AttachKind::Uprobe, target, func, insns), {}, pid,
                              fds);
      !st)
    return make_error(st.error());
  return fds;
}

Result<std::vector<UniqueFd>> hold_after_outermost(int pid, const std::string &target,
                                                   const std::string &func) {
  std::vector<UniqueFd> maps;
  int map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "gpubt_depth", 4, 8, 1, nullptr);
  if (map < 0)
    return make_error("cannot create the call depth map: " + error_text(-map));
  maps.emplace_back(map);
  std::vector<uint64_t> enter, leave;
  fetch_add_counter(enter, 1);
  enter.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0));
  enter.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0));
  fetch_add_counter(leave, -1);
  // Not the outermost call (the old depth was not 1): past the signal, to the return.
  leave.push_back(insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 1, 0, 2));
  stop_and_exit(leave);
  std::vector<UniqueFd> fds;
  for (auto &[kind, insns] : {std::pair{abi::AttachKind::Uprobe, enter},
                              std::pair{abi::AttachKind::Uretprobe, leave}})
    if (auto st = attach_hidden(hidden_probe(kind, target, func, insns), maps, pid, fds); !st)
      return make_error(st.error());
  for (auto &m : maps)
    fds.push_back(std::move(m));
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
