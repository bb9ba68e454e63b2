// A tseries() map's text: bpftrace head's graph of one key's intervals, a line per interval
// with its time of day, a '*' placed between the least and greatest value, and the value.
#pragma once
#include <string>

#include "runtime/output/tseries_rows.h"

namespace gpubt::runtime {

// The graph's lines, each ending in a newline; "<no data>" (no newline) for no intervals.
std::string tseries_graph(const TimeSeries &series);

} // namespace gpubt::runtime
