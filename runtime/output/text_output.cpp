// bpftrace 0.17's TextOutput: message(), value(), map(), map_hist() and map_stats() laid out
// byte for byte, but with control characters in the traced program's strings escaped; or, in
// OutputStyle::BpftraceHead, where bpftrace's head lays them out otherwise.
#include "runtime/output/text_output.h"

#include <cstring>
#include <iomanip>
#include <sstream>

#include "runtime/output/escape.h"
#include "runtime/output/tseries_graph.h"

namespace gpubt::runtime {

namespace {

class TextOutput : public Output {
public:
  TextOutput(std::ostream &out, const OutputOptions &options)
      : out_(out), err_(options.err ? *options.err : out),
        head_(options.style == OutputStyle::BpftraceHead),
        escape_(options.raw_strings ? nullptr : escape_control) {}

  void printf(const Message &message) override {
    for (const Message::Piece &p : message.pieces)
      out_ << (p.traced && escape_ ? escape_(p.text) : p.text);
  }
  void time(const std::string &text) override { out_ << text; }
  void command_output(const std::string &text) override { out_ << text; }
  void file_contents(const std::string &text) override { out_ << text; }
  void value(const Value &value) override {
    out_ << value_text(value, escape_, false, head_) << "\n";
  }

  void map(const MapView &map) override {
    for (size_t i = 0; i < map.rows.size(); i++)
      out_ << (i ? "\n" : "") << element(map, map.rows[i]);
    out_ << (map.kind == MapView::Kind::Stats ? "\n\n" : "\n");
  }

  void exit_maps_begin() override { out_ << "\n\n"; }
  void attached_probes(uint64_t count) override {
    if (head_)
      err_ << "Attached " << count << (count == 1 ? " probe\n" : " probes\n");
    else
      out_ << "Attaching " << count << (count == 1 ? " probe...\n" : " probes...\n");
  }
  void lost_events(uint64_t count) override { out_ << "Lost " << count << " events\n"; }
  // bpftrace's words: the error's text and number, or the bare 0 of a lookup that missed.
  void helper_error(const std::string &helper, int64_t retcode, uint32_t, uint32_t) override {
    out_ << "WARNING: Failed to " << helper << ": ";
    if (retcode < 0)
      out_ << std::strerror(int(-retcode)) << " (" << retcode << ")\n";
    else
      out_ << retcode << "\n";
  }
  void flush() override { out_.flush(); }
  OutputStyle style() const override {
    return head_ ? OutputStyle::BpftraceHead : OutputStyle::Bpftrace017;
  }

private:
  std::string element(const MapView &map, const MapView::Row &row) const {
    std::string out = map.name;
    if (map.keyed) {
      out += "[";
      for (size_t i = 0; i < row.key.size(); i++)
        out += (i ? ", " : "") + value_text(row.key[i], escape_, true, head_);
      out += "]";
    }
    if (map.kind == MapView::Kind::Hist)
      return out + (head_ ? ":\n" : ": \n") + map_value(row.value);
    if (map.kind == MapView::Kind::TimeSeries) // bpftrace head's only: its layout in both styles
      return out + ":\n" + map_value(row.value);
    return out + ": " + map_value(row.value);
  }

  std::string map_value(const Value &v) const {
    switch (v.kind) {
    case Value::Kind::Stats:
      if (head_)
        return "{ .count = " + std::to_string(v.count) + ", .average = " +
               std::to_string(v.average) + ", .total = " + std::to_string(v.total) + " }";
      return "count " + std::to_string(v.count) + ", average " + std::to_string(v.average) +
             ", total " + std::to_string(v.total);
    case Value::Kind::Hist:
      return hist_table(v.hist);
    case Value::Kind::TimeSeries:
      return tseries_graph(v.series);
    default:
      return value_text(v, escape_, false, head_);
    }
  }

  static std::string hist_table(const HistBuckets &hist) {
    const int max_width = 52;
    std::ostringstream out;
    for (const Bucket &b : hist.buckets) {
      int bar_width = int(b.raw / float(hist.max_value) * max_width);
      out << std::setw(16) << std::left << b.label << std::setw(8) << std::right << b.count << " |"
          << std::setw(max_width) << std::left << std::string(bar_width, '@') << "|\n";
    }
    return out.str();
  }

  std::ostream &out_, &err_;
  bool head_; // OutputStyle::BpftraceHead
  std::string (*escape_)(std::string_view); // the traced program's strings; null: raw
};

} // namespace

std::unique_ptr<Output> make_text_output(std::ostream &out, const OutputOptions &options) {
  return std::make_unique<TextOutput>(out, options);
}

} // namespace gpubt::runtime
