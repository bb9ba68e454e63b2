// A tiny BPF assembler for the runtime tests: hand-written programs in the ProgramSpec
// convention (a map reference is a ld_imm64 BPF_PSEUDO_MAP_FD whose imm is the map's index).
#pragma once
#include "runtime/abi/program_spec.h"
#include <cstring>
#include <linux/bpf.h>
#include <vector>

namespace gpubt::test {

class BpfAsm {
public:
  BpfAsm &raw(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
    bpf_insn in{};
    in.code = code;
    in.dst_reg = dst;
    in.src_reg = src;
    in.off = off;
    in.imm = imm;
    insns_.push_back(in);
    return *this;
  }
  BpfAsm &mov_imm(int dst, int32_t imm) { return raw(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
  BpfAsm &mov_reg(int dst, int src) { return raw(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
  BpfAsm &add_imm(int dst, int32_t imm) { return raw(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm); }
  BpfAsm &rsh_imm(int dst, int32_t imm) { return raw(BPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm); }
  BpfAsm &st_w(int dst, int16_t off, int32_t imm) {
    return raw(BPF_ST | BPF_MEM | BPF_W, dst, 0, off, imm);
  }
  BpfAsm &st_dw(int dst, int16_t off, int32_t imm) {
    return raw(BPF_ST | BPF_MEM | BPF_DW, dst, 0, off, imm);
  }
  BpfAsm &stx_dw(int dst, int16_t off, int src) {
    return raw(BPF_STX | BPF_MEM | BPF_DW, dst, src, off, 0);
  }
  BpfAsm &ldx_dw(int dst, int src, int16_t off) {
    return raw(BPF_LDX | BPF_MEM | BPF_DW, dst, src, off, 0);
  }
  BpfAsm &atomic_add_dw(int dst, int16_t off, int src) {
    return raw(BPF_STX | BPF_ATOMIC | BPF_DW, dst, src, off, BPF_ADD);
  }
  BpfAsm &ld_map(int dst, int map_index) {
    raw(BPF_LD | BPF_IMM | BPF_DW, dst, BPF_PSEUDO_MAP_FD, 0, map_index);
    return raw(0, 0, 0, 0, 0);
  }
  BpfAsm &call(int helper) { return raw(BPF_JMP | BPF_CALL, 0, 0, 0, helper); }
  // Conditional jumps to the epilogue (`r0 = 0; exit`) that end() appends.
  BpfAsm &jeq_imm_out(int dst, int32_t imm) {
    outs_.push_back(insns_.size());
    return raw(BPF_JMP | BPF_JEQ | BPF_K, dst, 0, 0, imm);
  }
  BpfAsm &jne_reg_out(int dst, int src) {
    outs_.push_back(insns_.size());
    return raw(BPF_JMP | BPF_JNE | BPF_X, dst, src, 0, 0);
  }
  BpfAsm &exit_insn() { return raw(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

  // Appends `r0 = 0; exit`, resolves the jumps to it, returns the words.
  std::vector<uint64_t> end() {
    size_t out = insns_.size();
    mov_imm(BPF_REG_0, 0);
    exit_insn();
    for (size_t at : outs_)
      insns_[at].off = static_cast<int16_t>(out - at - 1);
    std::vector<uint64_t> words(insns_.size());
    memcpy(words.data(), insns_.data(), words.size() * 8);
    return words;
  }

  // Common snippets.
  // @map[0] += 1 on an (optionally per-CPU) array map with u32 key and u64 value.
  BpfAsm &count_in_array(int map_index) {
    st_w(BPF_REG_10, -4, 0);
    mov_reg(BPF_REG_2, BPF_REG_10);
    add_imm(BPF_REG_2, -4);
    ld_map(BPF_REG_1, map_index);
    call(BPF_FUNC_map_lookup_elem);
    jeq_imm_out(BPF_REG_0, 0);
    mov_imm(BPF_REG_1, 1);
    return atomic_add_dw(BPF_REG_0, 0, BPF_REG_1);
  }
  // Sends {kind, index} (and REG's value as an 8-byte payload when reg >= 0) to the ring buffer.
  BpfAsm &emit_event(int ringbuf_map, uint32_t kind, uint32_t index, int reg = -1) {
    st_w(BPF_REG_10, -16, kind);
    st_w(BPF_REG_10, -12, index);
    if (reg >= 0)
      stx_dw(BPF_REG_10, -8, reg);
    ld_map(BPF_REG_1, ringbuf_map);
    mov_reg(BPF_REG_2, BPF_REG_10);
    add_imm(BPF_REG_2, -16);
    mov_imm(BPF_REG_3, reg >= 0 ? 16 : 8);
    mov_imm(BPF_REG_4, 0);
    return call(BPF_FUNC_ringbuf_output);
  }

private:
  std::vector<bpf_insn> insns_;
  std::vector<size_t> outs_;
};

inline abi::MapSpec array_map(const char *name, uint32_t type = BPF_MAP_TYPE_ARRAY,
                              uint32_t value_size = 8, uint32_t entries = 1) {
  abi::MapSpec m;
  m.name = name;
  m.bpf_type = type;
  m.key_size = 4;
  m.value_size = value_size;
  m.max_entries = entries;
  return m;
}

inline abi::MapSpec ringbuf_map() {
  abi::MapSpec m;
  m.name = "ringbuf";
  m.bpf_type = BPF_MAP_TYPE_RINGBUF;
  m.max_entries = 1 << 20;
  m.internal = true;
  return m;
}

inline abi::ProbeSpec probe(abi::AttachKind kind, std::string name, std::string target,
                            std::string func, std::vector<uint64_t> insns) {
  abi::ProbeSpec p;
  p.kind = kind;
  p.name = std::move(name);
  p.target = std::move(target);
  p.func = std::move(func);
  p.insns = std::move(insns);
  return p;
}

} // namespace gpubt::test
