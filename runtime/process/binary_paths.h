// Finds the file a uprobe target or a -c command names: paths as given, bare library names
// through the traced process's mappings, the ld.so cache and the standard library dirs.
#pragma once
#include "runtime/abi/result.h"
#include <optional>
#include <string>
#include <vector>

namespace gpubt::runtime {

// "uprobe:TARGET:..." -> an existing file. TARGET with a '/' is taken as given (or, with
// pid > 0, under /proc/PID/root: a process in another mount namespace); a bare name
// ("libc", "libc.so.6", "bash") is looked up in /proc/PID/maps (pid > 0), the ld.so cache, the
// standard library dirs, then $PATH. Error wording follows bpftrace.
Result<std::string> resolve_binary_path(const std::string &target, int pid = -1);

// execvp's lookup: CMD with a '/' as given, else the first executable in $PATH.
Result<std::string> find_in_path(const std::string &cmd);

// The GPU library a probe target alias names: `cudart` (the executable itself when it links
// cudart statically, else its libcudart.so.*), `cuda` (libcuda.so.1), `hip` (libamdhip64.so.*),
// `nccl` (libnccl.so.*), `rccl` (librccl.so.*), `c10_cuda` (PyTorch's libc10_cuda.so).
// EXE is the traced program (-c: held before exec, so its ELF DT_NEEDED/RUNPATH/RPATH,
// LD_LIBRARY_PATH and the ld.so cache are searched as ld.so would); PID > 0 (-p) looks in its
// /proc/PID/maps first (and reads its exe); neither: the system's library paths.
// nullopt when TARGET is not an alias; an error when no such library is found. FROM_SYSTEM, if
// given, tells whether the answer came from the system search only (the program neither links
// nor maps the library: it may dlopen another copy later, as PyTorch does).
std::optional<Result<std::string>> resolve_gpu_library(const std::string &target, int pid,
                                                       const std::string &exe,
                                                       bool *from_system = nullptr);

// The basename prefix of the files a GPU library alias names ("cudart" -> "libcudart.so"), as
// /proc/PID/maps shows them; nullptr when TARGET is not an alias.
const char *gpu_library_prefix(const std::string &target);

// The files process PID maps whose basename starts with PREFIX, each once, in map order.
std::vector<std::string> mapped_files_with_prefix(int pid, const std::string &prefix);

// The shared libraries EXE needs (DT_NEEDED, and what those need), found as ld.so would, each
// once, in breadth-first order; names not found are left out.
std::vector<std::string> linked_libraries(const std::string &exe);

// EXE's program interpreter (PT_INTERP: "/lib64/ld-linux-x86-64.so.2"); empty for a static
// executable, a script or an unreadable file.
std::string program_interpreter(const std::string &exe);

} // namespace gpubt::runtime
