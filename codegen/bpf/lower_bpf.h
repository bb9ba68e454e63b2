// The host BPF back end: typed AST -> LLVM IR -> BPF ELF object -> per-probe instruction arrays
// packaged as the abi::ProgramSpec the runtime loads.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "codegen/bpf/tracepoint_format.h"
#include "codegen/layout/program_layout.h"
#include "frontend/passes/semantic_info.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/usdt_site.h"

namespace gpubt::codegen::bpf {

struct BpfCodegenOptions {
  bool has_child = false;  // a child command runs (-c): cpid is allowed
  bool optimize = true;    // run LLVM's O2 pipeline before instruction selection
  // Load uprobes that use str() sleepable and fault the strings' pages in first (bpftrace
  // 0.17 reads "" from pages not yet touched); false reproduces bpftrace exactly.
  bool fault_in_strings = true;
  // --timeline: span events at functions probed at both entry and return, stamped printfs
  // (codegen/bpf/lower_timeline.h).
  bool timeline = false;
  // Layout of tracepoint args.NAME; empty: read from tracefs (read_tracepoint_field).
  std::function<std::optional<TracepointField>(const frontend::AttachPoint &, std::string_view)>
      tracepoint_field;
  // -k: report helper errors from probe_read and map deletes; -kk: map lookups too.
  int helper_error_checks = 0;
  // args->NAME of a uprobe typed by the binary's debug info: the argument register's index.
  std::function<std::optional<uint32_t>(const frontend::AttachPoint &, std::string_view)>
      uprobe_arg_index;
  // The sites a usdt attach point names (the driver reads the files' notes); each site is one
  // probe function, as bpftrace counts them. Unset: usdt probes are an error.
  std::function<Result<std::vector<abi::UsdtSite>>(const frontend::AttachPoint &)> usdt_sites;
  // The program -c runs or -p's /proc/PID/exe ("" without either): watchpoint:FUNC+argN's file.
  std::string traced_program;
  // The CPUs whose parts of an aggregation `for ($kv : @m)` adds up (the kernel's possible CPUs;
  // the loop also stops at the first CPU the kernel does not have).
  uint32_t num_cpus = 1024;
  // tseries()'s clock: CLOCK_BOOTTIME plus this is the wall clock's nanoseconds (as bpftrace's
  // sw_tai clock), measured when the program is compiled.
  uint64_t wall_clock_offset_ns = 0;
  // BPFTRACE_DUMMY_TS_MAP: tseries() takes the time from this scalar map of unsigned integers
  // instead (bpftrace's test clock, which a script sets); "" for the real clock.
  std::string dummy_ts_map;
};

struct BpfArtifacts {
  abi::ProgramSpec spec;
  std::string llvm_ir;         // the optimized module, for --emit=llvm
  std::vector<uint8_t> object; // the ELF object, for --emit=bpf
};

// Host probes only: GPU probes are skipped (they belong to the device targets). The spec starts
// as LAYOUT's, with the GPU API probes' internal maps added. An error LLVM's back end reports
// (a probe past the 512-byte stack) is also put in DIAGS, where given, at its attach point.
Result<BpfArtifacts> lower_to_bpf(const frontend::Program &program,
                                  const frontend::SemanticInfo &sema,
                                  const layout::ProgramLayout &layout,
                                  const BpfCodegenOptions &opts,
                                  frontend::Diagnostics *diags = nullptr);

} // namespace gpubt::codegen::bpf
