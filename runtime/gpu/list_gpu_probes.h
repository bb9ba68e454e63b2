// -l 'gpu:...': the kernels in the fatbins of a program, a library or a process's mapped files,
// one `gpu:kprobe:KERNEL` line per probe point (and gpu:kretprobe, gpu:hang: CUDA kernels only),
// as `bpftrace -l 'uprobe:PATH:*'` lists functions;
// with -c, a program that links the Vulkan loader is run for the compute shaders it makes.
#pragma once
#include <ostream>
#include <string>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

struct GpuListRequest {
  // gpu:TYPE[:FILE][:KERNEL]: TYPE kprobe, kretprobe, hang or a wildcard; FILE a path (with a '/') or
  // a library name ("libcublasLt.so"); KERNEL matched as gpu probes match kernels (default *).
  std::string pattern;
  std::string command;  // -c: its program and the libraries it links, when FILE is not given
  int pid = -1;         // -p: the files it maps, when FILE is not given
  std::string arch;     // --gpu-arch ("sm_90"); empty: this machine's GPU, else sm_90
  bool verbose = false; // a header, each file, and the backend each kernel could get
  // Where -c says it runs a Vulkan program (its compute shaders exist only once it makes them),
  // and the program's own output goes.
  std::ostream *err = nullptr;
};

bool is_gpu_pattern(const std::string &pattern); // "gpu:..."

// Errors: a bad pattern or --gpu-arch, nothing to list from (no FILE, -c or -p), a file that
// cannot be read, is not ELF, or has no fatbin; a -p process that maps no file with a fatbin.
Status list_gpu_probes(const GpuListRequest &request, std::ostream &out);

} // namespace gpubt::runtime
