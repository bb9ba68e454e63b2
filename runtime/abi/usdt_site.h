// One USDT probe site (a .note.stapsdt entry) as the driver finds it and codegen lowers it:
// where the uprobe goes, the semaphore the kernel counts, and where each argument lives.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::abi {

// An argument spec of the note ("-4@%eax", "8@-8(%rbp)", "-4@$5", "8@-88(%rsp,%rax,8)"):
// SIZE bytes, signed when the spec's size is negative.
struct UsdtArg {
  enum Kind : uint8_t { Const, Reg, Mem };
  Kind kind = Const;
  uint32_t size = 8;
  bool is_signed = false;
  int64_t value = 0;         // Const: the value; Mem: the displacement
  std::string reg;           // Reg: the register; Mem: the base register (x86-64 names, no '%')
  std::string index_reg;     // Mem: the index register, if any
  uint32_t scale = 1;        // Mem: the index's scale
};

struct UsdtSite {
  std::string path;            // the file the probe is in
  std::string provider, name;  // tracetest:testprobe
  uint64_t offset = 0;         // file offset of the probe's nop
  uint64_t semaphore = 0;      // file offset of the semaphore, 0 when it has none
  std::vector<UsdtArg> args;
};

} // namespace gpubt::abi
