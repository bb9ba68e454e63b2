// Maps as Prometheus metric families (prometheus.io/docs/instrumenting/exposition_formats/),
// capped to the top series of each map, then gpubt's own health.
#include "runtime/output/prometheus_output.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/output/escape.h"

namespace gpubt::runtime {

namespace {

using abi::AggKind;
using Int = __int128; // sums of uint64 counts and of int64 values without overflow

std::string int_text(Int v) {
  if (v == 0)
    return "0";
  unsigned __int128 u = v < 0 ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  for (; u; u /= 10)
    digits += char('0' + int(u % 10));
  if (v < 0)
    digits += '-';
  return {digits.rbegin(), digits.rend()};
}

Int parse_int(const std::string &text) {
  Int v = 0;
  for (size_t i = text[0] == '-'; i < text.size(); i++)
    v = v * 10 + (text[i] - '0');
  return text[0] == '-' ? -v : v;
}

// The traced program's bytes as a label's text: control characters and bytes that are not
// UTF-8 as \xNN or \n, \t, \r (label values must be UTF-8), and a backslash of the string itself
// as \\, so that every backslash starts an escape and two strings never give one label
// ("c<newline>d" is c\nd, the four characters c\nd are c\\nd).
std::string label_text(std::string_view s) {
  std::string doubled;
  for (char c : s)
    doubled += c == '\\' ? std::string_view("\\\\") : std::string_view(&c, 1);
  return escape_control(doubled);
}

// A label value in the exposition format: that text with the format's own escapes for \, "
// and newline (text format 0.0.4).
std::string label_value(const Value &v) {
  std::string out;
  for (char c : value_text(v, label_text)) {
    if (c == '\\' || c == '"')
      out += {'\\', c};
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// A record's field as a label name: the field's own name, unless the exposition uses it already
// (le, quantile, value, other: gpubt's and Prometheus' own labels) or Prometheus reserves it
// (__*): then key_NAME. A name given twice (two records with one field name) gets _2, _3, ...
std::string field_label(const std::string &field, std::set<std::string> &used) {
  static const std::set<std::string> kTaken = {"le", "quantile", "value", "other"};
  std::string name = kTaken.count(field) || field.rfind("__", 0) == 0 ? "key_" + field : field;
  std::string unique = name;
  for (int n = 2; used.count(unique); n++)
    unique = name + "_" + std::to_string(n);
  used.insert(unique);
  return unique;
}

// One label per key argument: key="..." for a map of one key, key0..keyN for several; an
// argument that is a record, @m[(rank = r, op = func)], gives one label per field, named by it.
std::string key_labels(const std::vector<Value> &key) {
  std::vector<std::pair<std::string, const Value *>> labels;
  std::set<std::string> used;
  for (size_t i = 0; i < key.size(); i++) {
    if (key[i].kind != Value::Kind::NamedTuple)
      labels.emplace_back(field_label(key.size() == 1 ? "key" : "key" + std::to_string(i), used),
                          &key[i]);
    else
      for (size_t f = 0; f < key[i].elems.size(); f++)
        labels.emplace_back(field_label(key[i].names[f], used), &key[i].elems[f]);
  }
  std::string out;
  for (const auto &[name, value] : labels)
    out += (out.empty() ? "" : ",") + name + "=\"" + label_value(*value) + "\"";
  return out;
}

// An inclusive upper bound of a hist bucket, ordered numerically ("" is +Inf).
struct Bound {
  std::string text;
  bool operator<(const Bound &o) const {
    if (text.empty() || o.text.empty())
      return !text.empty() && o.text.empty();
    return parse_int(text) < parse_int(o.text);
  }
};

// One series of a map: a row, or the rows past the cap merged.
struct Series {
  std::string labels;
  Int value = 0; // Plain: the number (a non-number: 1); Stats: the count; Hist: the count
  Int total = 0; // Stats: the sum
  std::map<Bound, uint64_t> buckets; // Hist: count per bucket
};

Series make_series(const MapView &map, const MapView::Row &row) {
  Series s;
  s.labels = map.keyed ? key_labels(row.key) : "";
  const Value &v = row.value;
  switch (map.kind) {
  case MapView::Kind::Stats:
    s.value = v.count;
    s.total = v.total;
    break;
  case MapView::Kind::Hist:
    for (const Bucket &b : v.hist.buckets) {
      s.buckets[{b.le}] += b.count;
      s.value += b.count;
    }
    break;
  case MapView::Kind::TimeSeries: // a gauge of the newest interval that has a value
    for (const TimeSeries::Point &p : v.series.points)
      if (p.present)
        s.value = v.series.is_signed ? Int(p.value) : Int(uint64_t(p.value));
    break;
  case MapView::Kind::Plain:
    if (v.kind == Value::Kind::Number) {
      s.value = parse_int(v.text);
    } else {
      s.labels += std::string(s.labels.empty() ? "" : ",") + "value=\"" + label_value(v) + "\"";
      s.value = 1;
    }
    break;
  }
  return s;
}

// The series past the cap become one: min() keeps the least, max() the greatest, the rest add.
void merge_into(Series &into, const Series &s, AggKind agg) {
  if (agg == AggKind::Min)
    into.value = std::min(into.value, s.value);
  else if (agg == AggKind::Max)
    into.value = std::max(into.value, s.value);
  else
    into.value += s.value;
  into.total += s.total;
  for (const auto &[bound, count] : s.buckets)
    into.buckets[bound] += count;
}

std::vector<Series> capped_series(const MapView &map, uint32_t max_series) {
  std::vector<Series> all;
  for (const MapView::Row &row : map.rows)
    if (row.value.kind != Value::Kind::Number || !row.value.text.empty())
      all.push_back(make_series(map, row));
  std::stable_sort(all.begin(), all.end(),
                   [](const Series &a, const Series &b) { return a.value > b.value; });
  if (!max_series || all.size() <= max_series)
    return all;
  Series other = all[max_series];
  other.labels = "other=\"true\"";
  for (size_t i = max_series + 1; i < all.size(); i++)
    merge_into(other, all[i], map.agg);
  all.resize(max_series);
  all.push_back(std::move(other));
  return all;
}

const char *agg_name(AggKind agg) {
  switch (agg) {
  case AggKind::None:
    return "a value";
  case AggKind::Count:
    return "count()";
  case AggKind::Sum:
    return "sum()";
  case AggKind::Min:
    return "min()";
  case AggKind::Max:
    return "max()";
  case AggKind::Avg:
    return "avg()";
  case AggKind::Stats:
    return "stats()";
  case AggKind::Hist:
    return "hist()";
  case AggKind::Lhist:
    return "lhist()";
  case AggKind::Tseries:
    return "tseries(), the newest interval's value";
  }
  return "";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

class Writer {
public:
  explicit Writer(std::ostream &out) : out_(out) {}
  void family(const std::string &name, const char *type, const std::string &help) {
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  }
  void sample(const std::string &name, const std::string &labels, const std::string &value) {
    out_ << name << (labels.empty() ? "" : "{" + labels + "}") << " " << value << "\n";
  }

private:
  std::ostream &out_;
};

std::string with(const std::string &labels, const std::string &more) {
  return labels.empty() ? more : labels + "," + more;
}

void write_histogram(Writer &w, const std::string &base, const std::vector<Series> &series) {
  std::map<Bound, bool> bounds; // every finite bound any series has: all share one le set
  for (const Series &s : series)
    for (const auto &[bound, count] : s.buckets)
      if (!bound.text.empty())
        bounds[bound] = true;
  for (const Series &s : series) {
    uint64_t cumulative = 0;
    auto next = s.buckets.begin();
    for (const auto &[bound, unused] : bounds) {
      for (; next != s.buckets.end() && !(bound < next->first); ++next)
        cumulative += next->second;
      w.sample(base + "_bucket", with(s.labels, "le=\"" + bound.text + "\""),
               std::to_string(cumulative));
    }
    w.sample(base + "_bucket", with(s.labels, "le=\"+Inf\""), int_text(s.value));
    w.sample(base + "_count", s.labels, int_text(s.value));
  }
}

std::string family_base(const MapView &map) {
  return map.name == "@" ? "gpubt_map" : "gpubt_" + map.name.substr(1);
}

bool is_counter(const MapView &map) {
  // count() only grows, as does a sum() of unsigned values; clear() is a counter reset.
  return map.agg == AggKind::Count || (map.agg == AggKind::Sum && !map.is_signed);
}

// Every sample name a map's family writes (and those Prometheus reserves for its type).
std::vector<std::string> sample_names(const MapView &map) {
  std::string base = family_base(map);
  switch (map.kind) {
  case MapView::Kind::Hist:
    return {base, base + "_bucket", base + "_count", base + "_sum"};
  case MapView::Kind::Stats:
    return {base, base + "_sum", base + "_count", base + "_average"};
  case MapView::Kind::Plain:
  case MapView::Kind::TimeSeries:
    break;
  }
  return {is_counter(map) ? base + "_total" : base};
}

void write_family(Writer &w, const MapView &map, const std::vector<Series> &series) {
  std::string base = family_base(map);
  std::string help = "gpubt map " + map.name + ": " + agg_name(map.agg);
  switch (map.kind) {
  case MapView::Kind::Hist:
    w.family(base, "histogram", help + " (no _sum: the map keeps bucket counts only)");
    write_histogram(w, base, series);
    return;
  case MapView::Kind::Stats:
    w.family(base, "summary", help + ": count and total");
    for (const Series &s : series) {
      w.sample(base + "_sum", s.labels, int_text(s.total));
      w.sample(base + "_count", s.labels, int_text(s.value));
    }
    w.family(base + "_average", "gauge", help + ": the average, as gpubt prints it");
    for (const Series &s : series)
      w.sample(base + "_average", s.labels, int_text(s.value ? s.total / s.value : 0));
    return;
  case MapView::Kind::Plain:
  case MapView::Kind::TimeSeries:
    break;
  }
  bool counter = is_counter(map);
  std::string name = counter ? base + "_total" : base;
  w.family(name, counter ? "counter" : "gauge", help);
  for (const Series &s : series)
    w.sample(name, s.labels, int_text(s.value));
}

class PrometheusOutput : public Output {
public:
  PrometheusOutput(std::ostream &out, const MetricsOptions &options)
      : out_(out), options_(options) {}

  void printf(const Message &) override {}
  void time(const std::string &) override {}
  void value(const Value &) override {}
  void command_output(const std::string &) override {}
  void file_contents(const std::string &) override {}
  void exit_maps_begin() override {}

  // A name used twice would make Prometheus refuse the whole scrape (@x_count beside a
  // hist() @x, @attached_probes beside the health gauge): the later map is left out, said why.
  void map(const MapView &map) override {
    if (map.name.rfind("@_", 0) == 0) // a script's scratch map (tools/ncclhang.bt's @_front)
      return;
    for (const std::string &name : sample_names(map))
      if (taken_.count(name)) {
        body_ << "# gpubt: " << map.name << " is left out: the name " << name << " is taken\n";
        return;
      }
    for (const std::string &name : sample_names(map))
      taken_.insert(name);
    Writer w(body_);
    write_family(w, map, capped_series(map, options_.max_series));
  }

  void attached_probes(uint64_t count) override { probes_ = count; }
  void lost_events(uint64_t count) override { lost_ += count; }
  void dropped_gpu_updates(uint64_t count) override { dropped_ += count; }
  void attached_processes(uint64_t count) override { processes_ = count; }
  void running_kernels(const std::vector<RunningKernel> &kernels) override { running_ = kernels; }

  void flush() override {
    Writer w(body_);
    w.family("gpubt_attached_probes", "gauge", "Probes gpubt attached (host and gpu).");
    w.sample("gpubt_attached_probes", "", std::to_string(probes_));
    w.family("gpubt_attached_processes", "gauge",
             "Processes traced (-c or -p) that are running: 1 or 0; 0 without -c or -p.");
    w.sample("gpubt_attached_processes", "", std::to_string(processes_));
    w.family("gpubt_lost_events_total", "counter",
             "Events dropped because gpubt's ring buffer was full.");
    w.sample("gpubt_lost_events_total", "", std::to_string(lost_));
    w.family("gpubt_gpu_dropped_updates_total", "counter",
             "gpu map updates dropped on a full table (known when the traced program exits).");
    w.sample("gpubt_gpu_dropped_updates_total", "", std::to_string(dropped_));
    if (running_) {
      w.family("gpubt_gpu_oldest_running_seconds", "gauge",
               "How long the oldest kernel launch a process runs now has run (a process running "
               "none has no sample).");
      for (const auto &k : *running_)
        w.sample("gpubt_gpu_oldest_running_seconds",
                 "pid=\"" + std::to_string(k.pid) + "\",kernel=\"" +
                     label_value(Value::of(Value::Kind::String, k.kernel)) + "\"",
                 seconds_text(k.age_s));
    }
    out_ << body_.str();
    body_.str("");
    out_.flush();
  }

private:
  std::ostream &out_;
  MetricsOptions options_;
  std::ostringstream body_;
  std::set<std::string> taken_{"gpubt_attached_probes", "gpubt_attached_processes",
                               "gpubt_lost_events_total", "gpubt_gpu_dropped_updates_total",
                               "gpubt_gpu_oldest_running_seconds"};
  std::optional<std::vector<RunningKernel>> running_; // set: the agents watch
  uint64_t probes_ = 0, lost_ = 0, dropped_ = 0, processes_ = 0;
};

} // namespace

std::unique_ptr<Output> make_prometheus_output(std::ostream &out, const MetricsOptions &options) {
  return std::make_unique<PrometheusOutput>(out, options);
}

} // namespace gpubt::runtime
