// bpftrace's flags: parsing, cross-checks and --info.
#include "driver/bpftrace_flags.h"
#include "driver/version.h"

#include <cstdio>
#include <cstring>
#include <sys/utsname.h>

#include "llvm/Config/llvm-config.h"
#include "runtime/gpu/gpu_info.h"
#include "runtime/bpf/kernel_info.h"

namespace gpubt::driver {

namespace {
enum : int { kUnsafe = 512, kInclude, kNoWarnings, kInfo, kUsdtFileActivation, kBtf, kVerifyLlvmIr };
} // namespace

const char kBpftraceShortOptions[] = "qkB:I:db";

std::vector<option> bpftrace_long_options() {
  return {{"unsafe", no_argument, nullptr, kUnsafe},
          {"include", required_argument, nullptr, kInclude},
          {"no-warnings", no_argument, nullptr, kNoWarnings},
          {"info", no_argument, nullptr, kInfo},
          {"usdt-file-activation", no_argument, nullptr, kUsdtFileActivation},
          {"btf", no_argument, nullptr, kBtf},
          {"verify-llvm-ir", no_argument, nullptr, kVerifyLlvmIr}};
}

std::optional<Status> apply_bpftrace_flag(int c, const char *arg, BpftraceFlags &f) {
  switch (c) {
  case 'q':
    f.quiet = true;
    return Ok{};
  case 'k':
    if (++f.helper_check_level >= 3)
      return make_error(""); // bpftrace prints only its usage
    return Ok{};
  case 'B':
    if (!std::strcmp(arg, "line"))
      f.buffering = BufferMode::Line;
    else if (!std::strcmp(arg, "full"))
      f.buffering = BufferMode::Full;
    else if (!std::strcmp(arg, "none"))
      f.buffering = BufferMode::None;
    else
      return make_error("USAGE: -B must be either 'line', 'full', or 'none'.");
    return Ok{};
  case 'I':
    f.include_dirs.push_back(arg);
    return Ok{};
  case 'd':
    if (++f.debug > 2)
      return make_error("");
    return Ok{};
  case 'b': // bpftrace's -b/--btf: BTF is always used where present; kept for old scripts
  case kBtf:
  // bpftrace's --verify-llvm-ir (its runtime tests pass it): both of gpubt's lowerings verify
  // every module they build, always.
  case kVerifyLlvmIr:
    return Ok{};
  case kUnsafe:
    f.unsafe = true;
    return Ok{};
  case kInclude:
    f.include_files.push_back(arg);
    return Ok{};
  case kNoWarnings:
    f.no_warnings = true;
    return Ok{};
  case kInfo:
    f.info = true;
    return Ok{};
  case kUsdtFileActivation:
    f.usdt_file_activation = true;
    return Ok{};
  default:
    return std::nullopt;
  }
}

Status check_bpftrace_flags(const BpftraceFlags &f, bool verbose) {
  if (verbose && f.debug)
    return make_error("USAGE: Use either -v or -d.");
  return Ok{};
}

void print_info(std::FILE *out) {
  utsname u{};
  uname(&u);
  std::fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
               u.machine);
  std::fprintf(out, "Build\n  version: gpubt %s\n  LLVM: " LLVM_VERSION_STRING "\n\n", kVersion);
  runtime::print_gpu_info(out);
  runtime::print_kernel_info(out);
}

} // namespace gpubt::driver
