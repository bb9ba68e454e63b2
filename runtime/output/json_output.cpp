// bpftrace 0.17's JsonOutput: the same events and maps as objects, one per line.
#include "runtime/output/json_output.h"

#include <cstdio>
#include <ctime>

#include "runtime/output/escape.h"

namespace gpubt::runtime {

namespace {

std::string quoted(std::string_view s) { return "\"" + json_escape(s) + "\""; }

// bpftrace head's interval_start: the time in UTC, to the nanosecond.
std::string utc_time(uint64_t ns) {
  std::time_t secs = std::time_t(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char day[32], frac[16];
  std::strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(frac, sizeof frac, ".%09llu", static_cast<unsigned long long>(ns % 1000000000));
  return std::string(day) + frac;
}

// A tseries() key's intervals that have a value, as bpftrace head lists them.
std::string json_series(const TimeSeries &ts) {
  std::string out = "[";
  for (const TimeSeries::Point &p : ts.points) {
    if (!p.present)
      continue;
    out += (out.size() > 1 ? ", " : "") + std::string("{\"interval_start\": ") +
           quoted(utc_time(p.start_ns)) + ", \"value\": " +
           (ts.is_signed ? std::to_string(p.value) : std::to_string(uint64_t(p.value))) + "}";
  }
  return out + "]";
}

std::string json_value(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Number:
    return v.text;
  case Value::Kind::String:
  case Value::Kind::Name:
    return quoted(v.text);
  case Value::Kind::Record:
  case Value::Kind::NamedTuple: {
    std::string out = "{ "; // bpftrace 0.17's spacing
    for (size_t i = 0; i < v.elems.size(); i++)
      out += (i ? ", " : "") + quoted(i < v.names.size() ? v.names[i] : "") + ": " +
             json_value(v.elems[i]);
    return out + " }";
  }
  case Value::Kind::Tuple:
  case Value::Kind::Array: {
    std::string out = "[";
    for (size_t i = 0; i < v.elems.size(); i++)
      out += (i ? "," : "") + json_value(v.elems[i]);
    return out + "]";
  }
  case Value::Kind::Stats:
    return "{\"count\": " + std::to_string(v.count) +
           ", \"average\": " + std::to_string(v.average) +
           ", \"total\": " + std::to_string(v.total) + "}";
  case Value::Kind::TimeSeries:
    return json_series(v.series);
  case Value::Kind::Hist: {
    std::string out = "[";
    for (size_t i = 0; i < v.hist.buckets.size(); i++) {
      const Bucket &b = v.hist.buckets[i];
      out += i ? ", {" : "{";
      if (!b.min.empty())
        out += "\"min\": " + b.min + ", ";
      if (!b.max.empty())
        out += "\"max\": " + b.max + ", ";
      out += "\"count\": " + std::to_string(b.count) + "}";
    }
    return out + "]";
  }
  }
  return "";
}

// A key is its arguments' text joined by "," (bpftrace's map key string), as one JSON string.
std::string json_key(const std::vector<Value> &key) {
  std::string text;
  for (size_t i = 0; i < key.size(); i++)
    text += (i ? "," : "") + value_text(key[i]);
  return quoted(text);
}

// -f json-keys: each key argument as its own JSON value (numbers as numbers).
std::string typed_key(const std::vector<Value> &key) {
  std::string out = "[";
  for (size_t i = 0; i < key.size(); i++) {
    const Value &v = key[i];
    out += (i ? ", " : "") +
           (v.kind == Value::Kind::Number && v.text.empty() ? "null" : json_value(v));
  }
  return out + "]";
}

const char *map_type(MapView::Kind kind) {
  switch (kind) {
  case MapView::Kind::Hist:
    return "hist";
  case MapView::Kind::Stats:
    return "stats";
  case MapView::Kind::TimeSeries:
    return "tseries";
  case MapView::Kind::Plain:
    break;
  }
  return "map";
}

class JsonOutput : public Output {
public:
  JsonOutput(std::ostream &out, JsonKeys keys) : out_(out), keys_(keys) {}

  void printf(const Message &message) override { this->message("printf", message.joined()); }
  void time(const std::string &text) override { message("time", text); }
  void command_output(const std::string &text) override { message("syscall", text); }
  void file_contents(const std::string &text) override { message("cat", text); }
  void join(const std::string &text) override { message("join", text); }
  void helper_error(const std::string &helper, int64_t retcode, uint32_t line,
                    uint32_t col) override {
    out_ << "{\"type\": \"helper_error\", \"helper\": " << quoted(helper)
         << ", \"retcode\": " << retcode << ", \"line\": " << line << ", \"col\": " << col
         << "}\n";
  }
  void value(const Value &value) override {
    out_ << "{\"type\": \"value\", \"data\": " << json_value(value) << "}\n";
  }

  // An empty map prints nothing.
  void map(const MapView &map) override {
    if (map.rows.empty())
      return;
    bool typed = map.keyed && keys_ == JsonKeys::Typed;
    out_ << "{\"type\": \"" << map_type(map.kind) << "\", \"data\": {" << quoted(map.name) << ": "
         << (typed       ? "["
             : map.keyed ? "{"
                         : "");
    for (size_t i = 0; i < map.rows.size(); i++) {
      const MapView::Row &row = map.rows[i];
      out_ << (i ? ", " : "");
      if (typed)
        out_ << "{\"key\": " << typed_key(row.key) << ", \"value\": " << json_value(row.value)
             << "}";
      else
        out_ << (map.keyed ? json_key(row.key) + ": " : "") << json_value(row.value);
    }
    out_ << (typed ? "]" : map.keyed ? "}" : "") << "}}\n";
  }

  void exit_maps_begin() override { out_ << "\n\n"; }
  void attached_probes(uint64_t count) override { counter("attached_probes", "probes", count); }
  void lost_events(uint64_t count) override { counter("lost_events", "events", count); }
  void flush() override { out_.flush(); }

private:
  void message(const char *type, const std::string &text) {
    out_ << "{\"type\": \"" << type << "\", \"data\": " << quoted(text) << "}\n";
  }
  void counter(const char *type, const char *field, uint64_t n) {
    out_ << "{\"type\": \"" << type << "\", \"data\": {\"" << field << "\": " << n << "}}\n";
  }

  std::ostream &out_;
  JsonKeys keys_;
};

} // namespace

std::unique_ptr<Output> make_json_output(std::ostream &out, JsonKeys keys) {
  return std::make_unique<JsonOutput>(out, keys);
}

} // namespace gpubt::runtime
