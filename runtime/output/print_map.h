// Prints maps as bpftrace 0.17 does, for print(@m) and at exit, in text or -f json.
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// print(@m, top, div): only the last `top` rows (0: all), numbers divided by `div`.
struct PrintOptions {
  uint32_t top = 0;
  uint32_t div = 1;
};

// One map. An empty map prints a blank line in text (two for avg/stats) and nothing in JSON.
void print_map(std::ostream &out, const abi::ProgramSpec &spec, int map_index, const MapData &data,
               OutputFormat format, const Symbolizer &symbolize, PrintOptions options = {});

// The exit printout: the two newlines bpftrace always writes, then each non-internal map in
// name order. `maps` is indexed like spec.maps; a missing entry prints as an empty map.
void print_all_maps(std::ostream &out, const abi::ProgramSpec &spec,
                    const std::vector<MapData> &maps, OutputFormat format,
                    const Symbolizer &symbolize);

} // namespace gpubt::runtime
