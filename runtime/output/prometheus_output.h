// Prometheus' text exposition format (0.0.4): the maps and gpubt's health as metric families,
// for the --metrics endpoint (metrics_endpoint.h). One Output serves one scrape: maps and health
// counts are collected, then flush() writes the whole exposition.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>

#include "runtime/output/output.h"

namespace gpubt::runtime {

struct MetricsOptions {
  // Series one map may expose: the top N by value (hist: by count, avg/stats: by count), the
  // rest merged into one series labelled other="true". 0: no cap.
  uint32_t max_series = 100;
};

// Families: gpubt_NAME for @NAME, gpubt_map for @. count() and unsigned sum() are counters
// (gpubt_NAME_total); min(), max(), signed sum() and plain values gauges (a non-number value is
// a gauge of 1 with a value="..." label); avg() and stats() a summary (_sum, _count) and a
// gauge gpubt_NAME_average; hist() and lhist() histograms (_bucket{le=...}, _count; they keep
// no sum of their values, so no _sum). Keys are labels: key="..." for one key, key0..keyN for
// several, and a key that is a record, @m[(rank = r, op = func)], one label per field named by
// it (le, quantile, value, other and __* as key_NAME; a name twice as NAME_2). Maps named @_*
// are a script's scratch and not exported.
std::unique_ptr<Output> make_prometheus_output(std::ostream &out, const MetricsOptions &options);

} // namespace gpubt::runtime
