// Where a kernel's memory-access and barrier probes go in its PTX, and what each call passes:
// the Compute Sanitizer's callback arguments (runtime/abi/probe_point.h) read off the instruction.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ptx/ptx_scan.h"

namespace gpubt::runtime::ptx {

struct ProbeSite {
  size_t at = 0;         // the instruction's offset: the call goes before it
  std::string predicate; // the instruction's guard, which the call takes too
  std::string setup;     // PTX computing the arguments, inside the call's block (may be empty)
  std::vector<std::string> args; // past (userdata, pc): registers and immediates
};

// Each ld/ldu/st/atom/red in STMTS (a kernel body of TEXT) that ACCESS (abi::MemoryAccessBits:
// kinds and spaces, none meaning all) may want: ptr (a global address, or the offset in the
// shared or local window), accessSize, flags (abi::MemoryFlagBits), pData 0. A generic one
// (no state space) finds its space with isspacep at run time, and the probe filters. .param,
// .const and texture reads are not memory accesses here.
std::vector<ProbeSite> memory_sites(std::string_view text, const std::vector<Statement> &stmts,
                                    uint32_t access);

// Each block-wide barrier (bar/barrier .sync, .arrive, .red; not bar.warp.sync nor cluster
// barriers): barIndex, threadCount (0 when the instruction names none: the whole block),
// flags (1: an unaligned barrier.sync, as the Sanitizer's UNALIGNED_ALLOWED).
std::vector<ProbeSite> barrier_sites(std::string_view text, const std::vector<Statement> &stmts);

} // namespace gpubt::runtime::ptx
