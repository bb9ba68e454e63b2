// bpftrace 0.17's BPFTRACE_* environment variables, read and checked as bpftrace does.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::driver {

struct BpftraceEnv {
  uint64_t strlen = 64;            // BPFTRACE_STRLEN: bytes per str() (at most 200)
  uint64_t map_keys_max = 4096;    // BPFTRACE_MAP_KEYS_MAX
  uint64_t max_probes = 512;       // BPFTRACE_MAX_PROBES: check_probe_count in trace.cpp
  uint64_t max_bpf_progs = 512;    // BPFTRACE_MAX_BPF_PROGS
  uint64_t log_size = 1000000;     // BPFTRACE_LOG_SIZE: verifier log bytes
  uint64_t perf_rb_pages = 64;     // BPFTRACE_PERF_RB_PAGES
  uint64_t cat_bytes_max = 10240;  // BPFTRACE_CAT_BYTES_MAX
  bool demangle_cpp = true;        // BPFTRACE_NO_CPP_DEMANGLE=1 turns it off
  bool resolve_user_symbols = true; // BPFTRACE_NO_USER_SYMBOLS=1 turns it off
  // BPFTRACE_DUMMY_TS_MAP: the map tseries() reads its time from (bpftrace head's test clock)
  std::string dummy_ts_map;
};

// Reads the environment; an invalid value is an error in bpftrace's words.
Result<BpftraceEnv> read_bpftrace_env();

} // namespace gpubt::driver
