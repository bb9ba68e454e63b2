// The driver's answer to codegen's question "which USDT sites does this attach point name?":
// the files' notes, read once per attach point, with -p's process or -c's program.
#pragma once
#include "codegen/bpf/lower_bpf.h"
#include "driver/options.h"

namespace gpubt::driver {

decltype(codegen::bpf::BpfCodegenOptions::usdt_sites) make_usdt_site_finder(const Options &o);

} // namespace gpubt::driver
