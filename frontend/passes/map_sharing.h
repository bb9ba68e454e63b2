// Maps named by both host and gpu probes and how they are shared: an aggregation both sides
// update (each keeps its own part; the parts print as one map, merged like per-CPU values), or a
// plain map one side writes and the other only reads (the agent copies it across).
#pragma once
#include <map>
#include <string>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/passes/semantic_info.h"

namespace gpubt::frontend {

enum class MapSharing {
  HostOnly,
  // Host probes may print(), clear(), zero() and read an aggregation (the agents send the GPU's
  // values live; the tracer copies them into the BPF map host probes read: DeviceMapSpec::
  // host_reads).
  GpuOnly,
  Aggregation, // updated on both sides, read on neither
  FromHost,    // plain; host probes write (and read), gpu probes only read
  ToHost,      // plain; gpu probes write (and read), host probes only read and print
  // Refused:
  GpuWritten,         // plain, written by both gpu and host probes
  ToHostCleared,      // a ToHost map host probes delete from, clear or zero
  AggregationRead,    // an Aggregation some probe reads, prints, clears or deletes from
  GpuAggregationUsed, // an aggregation only gpu probes update, which host probes delete() from,
                      // or clear or zero though it is a min or max
};

struct MapSides {
  MapSharing sharing = MapSharing::HostOnly;
  const Node *host_use = nullptr;  // first mention in a host probe
  const Node *host_other = nullptr; // the same, print()'s, clear()'s and zero()'s argument aside
  const Node *host_reset = nullptr; // first clear() or zero() of it in a host probe
  const Node *gpu_use = nullptr;   // first mention in a gpu probe
  const Node *gpu_write = nullptr; // first gpu assignment target or ++/-- operand
  const Node *host_write = nullptr;  // the same in a host probe
  const Node *host_delete = nullptr; // first host delete(), clear() or zero() of it
  const Node *host_remove = nullptr; // first host delete() of it
  const Node *read = nullptr;      // first mention, either side, that is not an update's target
  const Node *gpu_read = nullptr;  // the same in a gpu probe
};

// Every map a probe names, by name. No errors: check_map_sharing reports the refused ones.
std::map<std::string, MapSides> map_sharing(const Program &program, const SemanticInfo &info);

// Why SIDES cannot be shared, "" when it can.
std::string map_sharing_error(const std::string &map, const MapSides &sides);

// Reports each refused map once, at the use that makes it refused.
void check_map_sharing(const Program &program, const SemanticInfo &info, Diagnostics &diags);

} // namespace gpubt::frontend
