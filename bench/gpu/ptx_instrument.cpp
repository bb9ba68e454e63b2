// What the PTX backend makes of a module, without a GPU (bench/gpu/probe_size.sh): MODULE.ptx with
// gpubt's probe PTX (gpubt --emit=ptx) pasted into KERNEL as the agent pastes it, printed.
// usage: ptx_instrument MODULE.ptx PROBES.ptx KERNEL entry|exit|memory
#include <fstream>
#include <iostream>
#include <sstream>

#include "runtime/ptx/ptx_instrument.h"

namespace {

std::string read_file(const char *path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

int main(int argc, char **argv) {
  using namespace gpubt::runtime;
  std::string where = argc == 5 ? argv[4] : "";
  if (where != "entry" && where != "exit" && where != "memory") {
    std::cerr << "usage: ptx_instrument MODULE.ptx PROBES.ptx KERNEL entry|exit|memory\n";
    return 2;
  }
  PtxKernelProbes k;
  k.kernel = argv[3];
  // gpubt_probe_0 is the script's first probe; a memory probe's global-space patch is its own.
  (where == "entry" ? k.entry_probe : where == "exit" ? k.exit_probe : k.memory_probe) =
      where == "memory" ? "gpubt_probe_0_global" : "gpubt_probe_0";
  PtxInstrumentOptions options;
  options.kernels.push_back(k);
  options.probe_ptx = read_file(argv[2]);
  auto out = instrument_ptx(read_file(argv[1]), options);
  if (!out) {
    std::cerr << "ptx_instrument: " << out.error() << "\n";
    return 1;
  }
  std::cout << *out;
  return 0;
}
