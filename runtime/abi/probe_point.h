// Where in a kernel a gpu probe runs: one row per point, with its arguments. A new point is its
// row here, its builtins (stdlib), a lowering by each DeviceTarget that supports() it, and one
// inserter per injector (runtime/cuda_agent, runtime/vulkan). Std only.
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubt::abi {

enum class ProbePointKind : uint8_t {
  Entry,        // every thread, at kernel entry (gpu:kprobe)
  Exit,         // every thread, as it leaves the kernel (gpu:kretprobe)
  Launch,       // once per launch, on the host side of the launch (not lowered yet)
  MemoryAccess, // every thread, at each memory access of ProbePoint::access (gpu:mem/load/...)
  Barrier,      // every thread, at each block-wide barrier (gpu:barrier)
};
constexpr int kProbePointKinds = 5;

// MemoryAccess's argument: which accesses it runs at, a kind and a space: no kind bit is every
// kind, no space bit every space.
enum MemoryAccessBits : uint32_t {
  AccessRead = 1,
  AccessWrite = 2,
  AccessAtomic = 4,
  AccessKinds = 7,
  AccessGlobal = 8,
  AccessShared = 16,
  AccessLocal = 32,
  AccessSpaces = 56,
};

// The `flags` a memory-access probe function gets: the Compute Sanitizer's
// (Sanitizer_DeviceMemoryFlags: a read, a write, both for an atomic, ATOMSYS for a system-scope
// one) and the space, which the inserter knows (SASS: the patch per instruction kind; PTX: the
// instruction's state space, or isspacep for a generic one). Its `ptr` is a global address, or
// for shared and local the offset in that window, as the Sanitizer gives it.
enum MemoryFlagBits : uint32_t {
  FlagRead = 1,
  FlagWrite = 2,
  FlagAtomSys = 4,
  FlagGlobal = 0x100,
  FlagShared = 0x200,
  FlagLocal = 0x400,
};

// A memory space's words: "global", "shared", "local" for AccessGlobal/Shared/Local, and its
// flag (FlagGlobal ...); nullptr / 0 for a bit that is no single space.
const char *memory_space_name(uint32_t access_space_bit);
uint32_t memory_space_flag(uint32_t access_space_bit);
// The patch a SASS injector registers for one space of a memory probe whose patch is PATCH:
// PATCH_global, ... (targets/ptx adds them: each ORs its space into the flags).
std::string memory_space_patch(const std::string &patch, uint32_t access_space_bit);

// The probe function's parameters at a point, by width (64 or 32 bits), as the Compute
// Sanitizer's callbacks take them: (userdata, pc), then a memory access's (ptr, accessSize,
// flags, pData) or a barrier's (barIndex, threadCount, flags). The PTX inserter passes the same.
std::vector<int> probe_param_bits(ProbePointKind kind);
constexpr size_t kMemoryFlagsParam = 4; // flags' place among a memory access's parameters

struct ProbePoint {
  ProbePointKind kind = ProbePointKind::Entry;
  uint32_t access = 0; // MemoryAccess: MemoryAccessBits; 0 elsewhere
  auto operator<=>(const ProbePoint &) const = default;
};

// Its word in the agent config and in dispatcher names: "enter", "exit", "launch", "memory",
// "barrier".
const char *probe_point_name(ProbePointKind kind);
// NAME, or NAME:ACCESS for a memory-access point with an argument.
std::string probe_point_text(const ProbePoint &p);
bool parse_probe_point(const std::string &text, ProbePoint &out);

} // namespace gpubt::abi
