// Map specs from the semantic map table; layouts follow runtime/abi/program_spec.h.
#include "codegen/layout/map_layout.h"

#include <linux/bpf.h>

#include "codegen/layout/value_type.h"

namespace gpubt::codegen::layout {

using frontend::Type;
using frontend::TypeKind;

// The BPF key ends in a uint64 bucket index (hist, lhist) or interval slot (tseries).
static bool is_bucketed(const frontend::MapInfo &m) {
  return m.value.kind == TypeKind::Hist || m.value.kind == TypeKind::Lhist ||
         m.value.kind == TypeKind::Tseries;
}

static_assert(int(abi::TseriesAgg::Sum) == int(frontend::TseriesAgg::Sum) &&
              int(abi::TseriesAgg::Last) == int(frontend::TseriesAgg::Last));

uint32_t user_key_size(const frontend::MapInfo &m) {
  if (m.key.is_none())
    return is_bucketed(m) ? 0 : 8;
  return m.key.size;
}

uint32_t bpf_key_size(const frontend::MapInfo &m) {
  if (!is_bucketed(m))
    return user_key_size(m);
  return (user_key_size(m) + 7) / 8 * 8 + 8;
}

uint32_t bpf_value_size(const frontend::MapInfo &m) {
  switch (m.value.kind) {
  case TypeKind::Min:
  case TypeKind::Max:
  case TypeKind::Avg:
  case TypeKind::Stats:
    return 16;
  case TypeKind::Count:
  case TypeKind::Sum:
  case TypeKind::Hist:
  case TypeKind::Lhist:
    return 8;
  case TypeKind::Tseries:
    return sizeof(abi::TseriesValue);
  default:
    return m.value.size ? m.value.size : 8;
  }
}

MapLayout add_map_specs(const frontend::SemanticInfo &sema, uint32_t max_entries,
                        abi::ProgramSpec &spec) {
  MapLayout layout;
  for (const auto &[name, info] : sema.maps) {
    abi::MapSpec m;
    m.name = name;
    m.agg = to_agg_kind(info.value.kind);
    m.key = to_value_type(info.key);
    m.value = to_value_type(info.value);
    bool lru = info.decl_kind.find("lru") != std::string::npos; // `let @m = lruhash(N);`
    bool plain = m.agg == abi::AggKind::None;
    m.bpf_type = lru ? (plain ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_LRU_PERCPU_HASH)
                     : (plain ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_HASH);
    m.key_size = bpf_key_size(info);
    m.value_size = bpf_value_size(info);
    m.max_entries = info.decl_max_entries ? uint32_t(info.decl_max_entries) : max_entries;
    m.lhist_min = info.value.lhist_min;
    m.lhist_max = info.value.lhist_max;
    m.lhist_step = info.value.lhist_step;
    m.tseries_interval_ns = uint64_t(info.value.tseries_interval_ns);
    m.tseries_intervals = uint64_t(info.value.tseries_intervals);
    m.tseries_agg = abi::TseriesAgg(info.value.tseries_agg);
    m.internal = info.internal;
    layout.user[name] = static_cast<int>(spec.maps.size());
    spec.maps.push_back(std::move(m));
  }

  abi::MapSpec rb;
  rb.name = "ringbuf";
  rb.bpf_type = BPF_MAP_TYPE_RINGBUF;
  rb.max_entries = 1u << 20;
  rb.internal = true;
  layout.ringbuf = spec.ringbuf_map = static_cast<int>(spec.maps.size());
  spec.maps.push_back(rb);

  abi::MapSpec globals;
  globals.name = "globals";
  globals.bpf_type = BPF_MAP_TYPE_ARRAY;
  globals.key_size = 4;
  globals.value_size = 8 * abi::global_map_drops_slot(static_cast<uint32_t>(layout.ringbuf));
  globals.max_entries = 1;
  globals.internal = true;
  layout.globals = spec.globals_map = static_cast<int>(spec.maps.size());
  spec.maps.push_back(globals);

  abi::MapSpec scratch;
  scratch.name = "scratch";
  scratch.bpf_type = BPF_MAP_TYPE_PERCPU_ARRAY;
  scratch.key_size = 4;
  scratch.value_size = 8;
  scratch.max_entries = 1;
  scratch.internal = true;
  layout.scratch = static_cast<int>(spec.maps.size());
  spec.maps.push_back(scratch);
  return layout;
}

} // namespace gpubt::codegen::layout
