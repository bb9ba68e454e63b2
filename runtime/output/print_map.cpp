// Map printing: bpftrace 0.17's map_to_str / map_hist_to_str / map_stats_to_str for both
// outputs, over rows already merged and ordered by map_rows().
#include "runtime/output/print_map.h"

#include <algorithm>
#include <string>

#include "runtime/output/hist_format.h"
#include "runtime/output/map_rows.h"
#include "runtime/output/value_format.h"

namespace gpubt::runtime {

using abi::AggKind;
using abi::ValueType;

namespace {

struct Printer {
  const abi::ProgramSpec &spec;
  const abi::MapSpec &map;
  const Symbolizer &symbolize;
  OutputFormat format;
  uint32_t div;

  bool json() const { return format == OutputFormat::Json; }

  std::string number(int64_t v, bool is_signed) const {
    return is_signed ? std::to_string(v / int64_t(div)) : std::to_string(uint64_t(v) / div);
  }

  std::string stats(const MapRow &r) const {
    int64_t count = int64_t(r.count), avg = r.average(), total = r.num;
    if (json())
      return "{\"count\": " + std::to_string(count) + ", \"average\": " + std::to_string(avg) +
             ", \"total\": " + std::to_string(total) + "}";
    return "count " + std::to_string(count) + ", average " + std::to_string(avg) + ", total " +
           std::to_string(total);
  }

  std::string plain(const MapRow &r) const {
    const ValueType &t = map.value;
    if (r.value.size() < t.size)
      return "";
    if (t.kind == ValueType::Int || t.kind == ValueType::UInt)
      return number(value_as_int(t, r.value.data()), t.kind == ValueType::Int);
    return json() ? format_value_json(t, r.value.data(), spec, symbolize)
                  : format_value(t, r.value.data(), spec, symbolize);
  }

  std::string value(const MapRow &r) const {
    switch (map.agg) {
    case AggKind::None:
      return plain(r);
    case AggKind::Avg:
      return number(r.average(), true);
    case AggKind::Stats:
      return stats(r);
    case AggKind::Hist:
      return json() ? hist_json(r.buckets, div) : hist_text(r.buckets, div);
    case AggKind::Lhist:
      return json() ? lhist_json(r.buckets, map.lhist_min, map.lhist_max, map.lhist_step)
                    : lhist_text(r.buckets, map.lhist_min, map.lhist_max, map.lhist_step);
    default:
      return number(r.num, map_value_signed(map));
    }
  }

  std::string element(const MapRow &r) const {
    std::string key = format_key(map.key, r.key.data(), spec, symbolize, format);
    if (json())
      return key.empty() ? value(r) : key + ": " + value(r);
    bool hist = map.agg == AggKind::Hist || map.agg == AggKind::Lhist;
    return map.name + key + ": " + (hist ? "\n" : "") + value(r);
  }

  // Rows joined as bpftrace joins them; `top` keeps the last rows (stats() ignores it there).
  std::string body(const std::vector<MapRow> &rows, uint32_t top) const {
    size_t skip = top && rows.size() > top && map.agg != AggKind::Stats ? rows.size() - top : 0;
    std::string out;
    for (size_t i = skip; i < rows.size(); i++)
      out += (i > skip ? (json() ? ", " : "\n") : "") + element(rows[i]);
    return out;
  }
};

const char *json_type(AggKind agg) {
  switch (agg) {
  case AggKind::Hist:
  case AggKind::Lhist:
    return "hist";
  case AggKind::Avg:
  case AggKind::Stats:
    return "stats";
  default:
    return "map";
  }
}

} // namespace

void print_map(std::ostream &out, const abi::ProgramSpec &spec, int map_index, const MapData &data,
               OutputFormat format, const Symbolizer &symbolize, PrintOptions options) {
  const abi::MapSpec &map = spec.maps.at(map_index);
  Printer p{spec, map, symbolize, format, options.div ? options.div : 1};
  std::vector<MapRow> rows = map_rows(map, data);
  std::string body = p.body(rows, options.top);
  if (format == OutputFormat::Text) {
    bool stats = map.agg == AggKind::Avg || map.agg == AggKind::Stats;
    out << body << (stats ? "\n\n" : "\n");
    return;
  }
  if (rows.empty())
    return;
  bool keyed = map.key.kind != ValueType::None;
  out << "{\"type\": \"" << json_type(map.agg) << "\", \"data\": {\"" << json_escape(map.name)
      << "\": " << (keyed ? "{" : "") << body << (keyed ? "}" : "") << "}}\n";
}

void print_all_maps(std::ostream &out, const abi::ProgramSpec &spec,
                    const std::vector<MapData> &maps, OutputFormat format,
                    const Symbolizer &symbolize) {
  out << "\n\n";
  std::vector<int> order;
  for (size_t i = 0; i < spec.maps.size(); i++)
    if (!spec.maps[i].internal)
      order.push_back(int(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return spec.maps[a].name < spec.maps[b].name; });
  static const MapData empty;
  for (int i : order)
    print_map(out, spec, i, size_t(i) < maps.size() ? maps[i] : empty, format, symbolize);
}

} // namespace gpubt::runtime
