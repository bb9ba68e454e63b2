// bpftrace 0.17's map_to_str / map_hist_to_str / map_stats_to_str, as values every format
// shares, over rows already merged and ordered by map_rows().
#include "runtime/output/print_map.h"

#include <algorithm>
#include <string>

#include "runtime/output/map_rows.h"

namespace gpubt::runtime {

using abi::AggKind;
using abi::ValueType;

namespace {

struct Decoder {
  const abi::ProgramSpec &spec;
  const abi::MapSpec &map;
  const Symbolizer &symbolize;
  uint32_t div;

  Value number(int64_t v, bool is_signed) const {
    return Value::number(is_signed ? std::to_string(v / int64_t(div))
                                   : std::to_string(uint64_t(v) / div));
  }

  Value plain(const MapRow &r) const {
    const ValueType &t = map.value;
    if (r.value.size() < t.size)
      return Value::number("");
    if (t.kind == ValueType::Int || t.kind == ValueType::UInt) {
      Value v = number(value_as_int(t, r.value.data()), t.kind == ValueType::Int);
      v.pointer = t.pointer;
      return v;
    }
    return make_value(t, r.value.data(), spec, symbolize);
  }

  Value value(const MapRow &r) const {
    Value v;
    switch (map.agg) {
    case AggKind::None:
      return plain(r);
    case AggKind::Avg: // its parts too, for formats that show them (metrics)
      v = number(r.average(), true);
      v.count = int64_t(r.count);
      v.average = r.average();
      v.total = r.num;
      return v;
    case AggKind::Stats:
      v.kind = Value::Kind::Stats;
      v.count = int64_t(r.count);
      v.average = r.average();
      v.total = r.num;
      return v;
    case AggKind::Hist:
      v.kind = Value::Kind::Hist;
      v.hist = hist_buckets(r.buckets, div);
      return v;
    case AggKind::Lhist:
      v.kind = Value::Kind::Hist;
      v.hist = lhist_buckets(r.buckets, map.lhist_min, map.lhist_max, map.lhist_step);
      return v;
    case AggKind::Tseries:
      v.kind = Value::Kind::TimeSeries;
      v.series = r.series;
      return v;
    default:
      return number(r.num, map_value_signed(map));
    }
  }
};

MapView::Kind view_kind(AggKind agg) {
  switch (agg) {
  case AggKind::Hist:
  case AggKind::Lhist:
    return MapView::Kind::Hist;
  case AggKind::Avg:
  case AggKind::Stats:
    return MapView::Kind::Stats;
  case AggKind::Tseries:
    return MapView::Kind::TimeSeries;
  default:
    return MapView::Kind::Plain;
  }
}

} // namespace

MapView make_map_view(const abi::ProgramSpec &spec, int map_index, const MapData &data,
                      const Symbolizer &symbolize, PrintOptions options) {
  const abi::MapSpec &map = spec.maps.at(map_index);
  Decoder d{spec, map, symbolize, options.div ? options.div : 1};
  MapView view;
  view.name = map.name;
  view.kind = view_kind(map.agg);
  view.agg = map.agg;
  view.is_signed = map_value_signed(map);
  view.keyed = map.key.kind != ValueType::None;
  std::vector<MapRow> rows = map_rows(map, data);
  // `top` keeps the last rows; bpftrace's stats() and tseries() printing ignore it.
  size_t top = map.agg == AggKind::Stats || map.agg == AggKind::Tseries ? 0 : options.top;
  size_t skip = top && rows.size() > top ? rows.size() - top : 0;
  for (size_t i = skip; i < rows.size(); i++)
    view.rows.push_back({make_key(map.key, rows[i].key.data(), spec, symbolize,
                                  options.uint64_keys_signed),
                         d.value(rows[i])});
  if (!view.rows.empty() || view.keyed)
    return view;
  if (options.empty == PrintOptions::EmptyScalar::CountAsZero && map.agg == AggKind::Count)
    view.rows.push_back({{}, Value::number("0")});
  if (options.empty == PrintOptions::EmptyScalar::ZeroValue) {
    MapRow zero;
    zero.value.assign(map.value.size, 0);
    view.rows.push_back({{}, d.value(zero)});
  }
  return view;
}

void print_map(Output &out, const abi::ProgramSpec &spec, int map_index, const MapData &data,
               const Symbolizer &symbolize, PrintOptions options) {
  if (out.style() == OutputStyle::BpftraceHead) {
    options.empty = options.at_exit ? PrintOptions::EmptyScalar::Nothing
                                    : PrintOptions::EmptyScalar::ZeroValue;
    options.uint64_keys_signed = false;
  }
  out.map(make_map_view(spec, map_index, data, symbolize, options));
}

void print_all_maps(Output &out, const abi::ProgramSpec &spec, const std::vector<MapData> &maps,
                    const Symbolizer &symbolize) {
  out.exit_maps_begin();
  std::vector<int> order;
  for (size_t i = 0; i < spec.maps.size(); i++)
    if (!spec.maps[i].internal)
      order.push_back(int(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return spec.maps[a].name < spec.maps[b].name; });
  static const MapData empty;
  PrintOptions options;
  options.at_exit = true;
  for (int i : order)
    print_map(out, spec, i, size_t(i) < maps.size() ? maps[i] : empty, symbolize, options);
}

} // namespace gpubt::runtime
