// x86-64 struct pt_regs (arch/x86/include/asm/ptrace.h), bpftrace's register names.
#include "stdlib/registers.h"

namespace gpubt::stdlib {

std::optional<unsigned> pt_regs_offset(std::string_view name) {
  static constexpr std::string_view kRegs[] = {
      "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
      "cx",  "dx",  "si",  "di",  "orig_ax", "ip", "cs", "flags", "sp", "ss"};
  for (unsigned i = 0; i < std::size(kRegs); ++i)
    if (kRegs[i] == name)
      return i * 8;
  return std::nullopt;
}

} // namespace gpubt::stdlib
