// Creates the BPF maps of a ProgramSpec and loads its programs (map references patched to fds).
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <vector>

namespace gpubt::runtime {

// One map per MapSpec, in spec order.
Result<std::vector<UniqueFd>> create_maps(const abi::ProgramSpec &spec);

// The program type a probe kind loads as (BPF_PROG_TYPE_*).
unsigned prog_type_for(abi::AttachKind kind);

// Loads PROBE's instructions after replacing every map index in a BPF_PSEUDO_MAP_FD /
// BPF_PSEUDO_MAP_VALUE ld_imm64 with the map's fd. On rejection the error holds the
// verifier log (the load is retried with a log buffer only then, to keep startup fast).
Result<UniqueFd> load_program(const abi::ProbeSpec &probe, const std::vector<UniqueFd> &maps);

// bpftrace's map naming: "@x" -> "AT_x", cut to the kernel's 15 characters.
std::string bpf_map_name(const std::string &name);

} // namespace gpubt::runtime
