// Where in a kernel a gpu probe runs: one row per point, with its arguments. A new point is its
// row here, its builtins (stdlib), a lowering by each DeviceTarget that supports() it, and one
// inserter per injector (runtime/cuda_agent, runtime/vulkan). Std only.
#pragma once
#include <compare>
#include <cstdint>
#include <string>

namespace gpubt::abi {

enum class ProbePointKind : uint8_t {
  Entry,        // every thread, at kernel entry (gpu:kprobe)
  Exit,         // every thread, as it leaves the kernel (gpu:kretprobe)
  Launch,       // once per launch, on the host side of the launch (not lowered yet)
  MemoryAccess, // every thread, at each global memory access of ProbePoint::access (not yet)
  Barrier,      // every thread, at each block-wide barrier (not yet)
};
constexpr int kProbePointKinds = 5;

// MemoryAccess's argument: which accesses it runs at (0: all of them).
enum MemoryAccessBits : uint32_t { AccessRead = 1, AccessWrite = 2, AccessAtomic = 4 };

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
