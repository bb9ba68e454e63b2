// bpftrace 0.17's flags that gpubt takes with bpftrace's meaning and messages: -q, --unsafe,
// -k/-kk, -B, -I, --include, -d/-dd, --no-warnings, --info, --usdt-file-activation, -b/--btf,
// and --verify-llvm-ir (newer bpftrace's).
// Kept apart from options.cpp so that gpubt's own options and their checks grow separately.
#pragma once
#include <getopt.h>
#include <optional>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::driver {

enum class BufferMode { Unset, Line, Full, None }; // -B

struct BpftraceFlags {
  bool quiet = false;                  // -q: no "Attaching N probes..."
  bool unsafe = false;                 // --unsafe: allow system() and other unsafe builtins
  int helper_check_level = 0;          // -k, -kk
  BufferMode buffering = BufferMode::Unset;
  std::vector<std::string> include_dirs;  // -I DIR
  std::vector<std::string> include_files; // --include FILE
  int debug = 0;                       // -d, -dd: a dry run that prints the AST
  bool no_warnings = false;            // --no-warnings
  bool info = false;                   // --info
  bool usdt_file_activation = false;   // --usdt-file-activation
};

// getopt letters and long options for these flags; their values are 'x' letters or >= 512.
extern const char kBpftraceShortOptions[];
std::vector<option> bpftrace_long_options();

// Applies flag `c` (a getopt result); nullopt if `c` is not one of these flags, else success or
// bpftrace's usage error.
std::optional<Status> apply_bpftrace_flag(int c, const char *arg, BpftraceFlags &flags);

// Checks across flags once all are read (bpftrace's "Use either -v or -d").
Status check_bpftrace_flags(const BpftraceFlags &flags, bool verbose);

// --info: the system, the build and what this kernel supports, in bpftrace's layout.
void print_info(std::FILE *out);

} // namespace gpubt::driver
