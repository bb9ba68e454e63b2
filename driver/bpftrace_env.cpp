// BPFTRACE_* variables: unsigned numbers parsed as C++ streams parse them (as bpftrace does, so
// "12abc" is 12), 0/1 switches, and bpftrace's STRLEN ceiling.
#include "driver/bpftrace_env.h"

#include <cstdlib>
#include <sstream>
#include <string>

namespace gpubt::driver {
namespace {

Status read_uint(const char *name, uint64_t &dest) {
  const char *v = std::getenv(name);
  if (!v)
    return Ok{};
  std::istringstream in(v);
  if (!(in >> dest))
    return make_error(std::string("Env var '") + name +
                      "' did not contain a valid uint64_t, or was zero-valued.");
  return Ok{};
}

// `neg`: the variable turns the setting off (BPFTRACE_NO_...).
Status read_bool(const char *name, bool &dest, bool neg) {
  const char *v = std::getenv(name);
  if (!v)
    return Ok{};
  std::string s(v);
  if (s != "0" && s != "1")
    return make_error(std::string("Env var '") + name + "' did not contain a valid value (0 or 1).");
  dest = (s == "1") != neg;
  return Ok{};
}

} // namespace

Result<BpftraceEnv> read_bpftrace_env() {
  BpftraceEnv e;
  if (auto st = read_uint("BPFTRACE_STRLEN", e.strlen); !st)
    return make_error(st.error());
  // Strings live on the 512-byte BPF stack, as in bpftrace 0.17.
  if (e.strlen > 200)
    return make_error("'BPFTRACE_STRLEN' " + std::to_string(e.strlen) +
                      " exceeds the current maximum of 200 bytes.\n"
                      "This limitation is because strings are currently stored on the 512 byte "
                      "BPF stack.");
  for (auto [name, dest] : {std::pair{"BPFTRACE_MAP_KEYS_MAX", &e.map_keys_max},
                            std::pair{"BPFTRACE_MAX_PROBES", &e.max_probes},
                            std::pair{"BPFTRACE_MAX_BPF_PROGS", &e.max_bpf_progs},
                            std::pair{"BPFTRACE_LOG_SIZE", &e.log_size},
                            std::pair{"BPFTRACE_PERF_RB_PAGES", &e.perf_rb_pages},
                            std::pair{"BPFTRACE_CAT_BYTES_MAX", &e.cat_bytes_max}})
    if (auto st = read_uint(name, *dest); !st)
      return make_error(st.error());
  if (auto st = read_bool("BPFTRACE_NO_CPP_DEMANGLE", e.demangle_cpp, true); !st)
    return make_error(st.error());
  if (auto st = read_bool("BPFTRACE_NO_USER_SYMBOLS", e.resolve_user_symbols, true); !st)
    return make_error(st.error());
  if (const char *v = std::getenv("BPFTRACE_DUMMY_TS_MAP"))
    e.dummy_ts_map = v;
  bool cache = false;
  if (auto st = read_bool("BPFTRACE_CACHE_USER_SYMBOLS", cache, false); !st)
    return make_error(st.error());
  return e;
}

} // namespace gpubt::driver
