// --timeline FILE: the trace-event JSON that Perfetto's UI, chrome://tracing and speedscope
// open, written beside the main output. Spans per call on their pid/tid track, printf()s as
// instant events on their probe's track, gpu launches as spans on a track per kernel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {

struct TimelineOptions {
  std::string path;
  // The ring: the newest this many events are kept; the file's otherData says how many were
  // dropped.
  size_t max_events = 1000000;
};

class TimelineOutput : public Output {
public:
  // The file is written when this is destroyed (whole, to PATH.tmp, then renamed over PATH);
  // a failure to write it goes to ERRORS.
  TimelineOutput(TimelineOptions options, std::ostream &errors);
  ~TimelineOutput() override;

  // Whether the file can be written where PATH says (checked before tracing starts).
  static Status check_writable(const std::string &path);

  // The trace of what came so far, as the file will hold it.
  std::string json() const;

  void printf(const Message &message) override;
  void time(const std::string &) override {}
  void value(const Value &) override {}
  void command_output(const std::string &) override {}
  void file_contents(const std::string &) override {}
  void map(const MapView &) override {}
  void exit_maps_begin() override {}
  void attached_probes(uint64_t count) override { attached_ = count; }
  void lost_events(uint64_t count) override { lost_ += count; }
  void flush() override {}
  void origin(const EventOrigin &origin) override { origin_ = origin; }
  void span_edge(const SpanEdge &edge) override;
  void gpu_launch(const GpuLaunch &launch) override;

private:
  struct Event {
    char ph = 'X'; // X: a span with its duration, i: an instant
    uint64_t ts = 0, dur = 0; // ns
    uint32_t pid = 0, tid = 0;
    std::string name, cat, args; // args: a JSON object's members, without the braces
  };
  struct Open {
    std::string name, args;
    uint64_t ts = 0;
  };
  void add(Event e);
  uint32_t track_pid(const EventOrigin &at) const;

  TimelineOptions options_;
  std::ostream &errors_;
  std::deque<Event> ring_;
  uint64_t dropped_ = 0, lost_ = 0, attached_ = 0, unmatched_returns_ = 0, untimed_launches_ = 0,
           last_ts_ = 0;
  std::optional<EventOrigin> origin_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Open>> open_; // (pid, tid): call stack
  std::map<uint32_t, std::string> kernels_;                         // kernel index -> name
  std::map<uint32_t, uint64_t> launches_;                           // kernel index -> launches
};

} // namespace gpubt::runtime
