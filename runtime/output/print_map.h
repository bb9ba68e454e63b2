// Maps decoded once (rows merged, ordered, trimmed, divided) and handed to an Output, for
// print(@m) and at exit.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {

// print(@m, top, div): only the last `top` rows (0: all), numbers divided by `div`.
struct PrintOptions {
  uint32_t top = 0;
  uint32_t div = 1;
  // A map without keys that holds nothing (never set, or emptied by clear() or delete()):
  // bpftrace 0.17 prints an emptied count() as 0; bpftrace head prints the value type's zero
  // for print(@m) and nothing at exit. print_map() picks by the output's style.
  enum class EmptyScalar { CountAsZero, ZeroValue, Nothing } empty = EmptyScalar::CountAsZero;
  bool at_exit = false; // print_all_maps()
  bool uint64_keys_signed = true; // bpftrace 0.17 prints a uint64 key as signed, head does not
};

MapView make_map_view(const abi::ProgramSpec &spec, int map_index, const MapData &data,
                      const Symbolizer &symbolize, PrintOptions options = {});

// One map. An empty map prints a blank line in text (two for avg/stats) and nothing in JSON.
void print_map(Output &out, const abi::ProgramSpec &spec, int map_index, const MapData &data,
               const Symbolizer &symbolize, PrintOptions options = {});

// The exit printout: the two newlines bpftrace always writes, then each non-internal map in
// name order. `maps` is indexed like spec.maps; a missing entry prints as an empty map.
void print_all_maps(Output &out, const abi::ProgramSpec &spec, const std::vector<MapData> &maps,
                    const Symbolizer &symbolize);

} // namespace gpubt::runtime
