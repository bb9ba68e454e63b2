// --timeline FILE: the trace-event JSON that Perfetto's UI, chrome://tracing and speedscope
// open, written beside the main output. Spans per call on their pid/tid track (named by the
// process's and the thread's comm: process_name and thread_name metadata events), printf()s as
// instant events on their probe's track, gpu launches as spans on a track per kernel; a span's
// arguments on an instant at its start (the span itself has none: speedscope's frames). Events go
// to the file as they come (timeline_file.h): memory stays small however long the trace.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/output/output.h"
#include "runtime/output/timeline_file.h"

namespace gpubt::runtime {

struct TimelineOptions {
  std::string path;
  // The newest this many events, and this many bytes of them, are kept (timeline_file.h); the
  // file's otherData says how many were dropped.
  size_t max_events = 1000000;
  size_t max_bytes = size_t(256) << 20;
  // Where finish() says what it wrote (the file, its events, the viewers); null: nowhere (-q).
  std::ostream *report = nullptr;
};

class TimelineOutput : public Output {
public:
  // Checks PATH (a regular file or none; its folder writable) before tracing starts.
  static Result<std::unique_ptr<TimelineOutput>> create(TimelineOptions options);
  // Without finish(), FILE is left as it was.
  ~TimelineOutput() override;

  Status finish() override;

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
    std::string label;           // a span's: the name of the instant that carries its args
  };
  struct Open {
    std::string name, args;
    std::string list; // the entry's args as the label shows them ("size=1024, kind=...")
    uint64_t ts = 0;
    // Calls inside this one that started at its very ts, written after it (see span_edge).
    std::vector<std::string> held;
    size_t held_bytes = 0;
  };
  TimelineOutput(TimelineOptions options, std::unique_ptr<TimelineFile> file);
  void write(const Event &e);
  void counted(const std::string &cat); // one more event of CAT in the file
  void release(Open &o);
  uint32_t track_pid(const EventOrigin &at) const;
  void name_host_track(uint32_t pid, uint32_t tid); // its comms, read while the task lives

  TimelineOptions options_;
  std::unique_ptr<TimelineFile> file_;
  std::optional<Status> finished_;
  uint64_t lost_ = 0, attached_ = 0, unmatched_returns_ = 0, untimed_launches_ = 0, last_ts_ = 0;
  uint64_t calls_ = 0, printfs_ = 0, gpu_spans_ = 0, dropped_ = 0; // what the file holds
  std::optional<EventOrigin> origin_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Open>> open_; // (pid, tid): call stack
  std::map<uint32_t, std::string> kernels_;                         // kernel index -> name
  std::map<uint32_t, uint64_t> launches_;                           // kernel index -> launches
  std::set<std::pair<uint32_t, uint32_t>> gpu_tracks_;              // (pid, kernel index)
  std::map<uint32_t, std::string> process_names_;                   // host pid -> comm
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names_; // (pid, tid) -> comm
};

} // namespace gpubt::runtime
