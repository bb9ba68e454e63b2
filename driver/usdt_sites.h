// The driver's answers to codegen's questions about the traced program's files: which USDT sites
// an attach point names (the files' notes, with -p's process or -c's program), and which program
// a function watchpoint is in.
#pragma once
#include "codegen/bpf/lower_bpf.h"
#include "driver/options.h"

namespace gpubt::driver {

decltype(codegen::bpf::BpfCodegenOptions::usdt_sites) make_usdt_site_finder(const Options &o);

// The program -c runs (found in $PATH) or /proc/PID/exe of -p; "" without either.
std::string traced_program(const Options &o);

} // namespace gpubt::driver
