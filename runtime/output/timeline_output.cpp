// The trace-event JSON of --timeline (see timeline_output.h). Spans are closed here, as
// complete ("X") events, so that the file never keeps one half of a span without the other.
#include "runtime/output/timeline_output.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "runtime/output/escape.h"
#include "runtime/process/demangle.h"
#include "runtime/process/task_name.h"

namespace gpubt::runtime {
namespace {

// GPU tracks live in a process of their own beside the traced one's threads: its pid with
// this bit set (pids are below 2^22).
constexpr uint32_t kGpuPidBit = 1u << 30;
// A call stack deeper than this on one thread is a missed return: the oldest entries go.
constexpr size_t kMaxDepth = 256;

std::string quoted(std::string_view s) { return "\"" + json_escape(s) + "\""; }

// Trace-event times are microseconds: ns with three decimals, exactly.
std::string micros(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buf;
}

// Numbers up to 15 digits stay JSON numbers (exact in a double, and every user-space address
// fits); larger ones, and everything else, are strings. A stack ("\n    frame\n" a frame) is
// its frames a line, innermost first, without the text output's indent.
std::string arg_json(const Value &v) {
  if (v.kind == Value::Kind::Number && !v.text.empty() && v.text.size() <= 15)
    return v.text;
  std::string text = value_text(v);
  if (v.kind == Value::Kind::Name && text.starts_with("\n    ")) {
    std::string lines;
    for (size_t at = 1; at + 4 <= text.size(); ) {
      size_t end = text.find('\n', at);
      end = end == std::string::npos ? text.size() : end;
      lines += (lines.empty() ? "" : "\n") + text.substr(at + 4, end - at - 4);
      at = end + 1;
    }
    text = lines;
  }
  return quoted(text);
}

std::string member(std::string_view name, const std::string &json) {
  return quoted(name) + ":" + json;
}

void append_member(std::string &members, std::string_view name, const std::string &json) {
  members += (members.empty() ? "" : ",") + member(name, json);
}

// The first line of a printf's text, for the instant's name.
std::string first_line(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "printf" : line.substr(0, 80);
}

// Held spans beyond this many bytes under one open call are written at once (see span_edge).
constexpr size_t kMaxHeldBytes = size_t(1) << 20;

// A span without args has no "args" member at all: speedscope names a frame by its event's
// name and, where the event has args (even {}), their JSON.
std::string event_json(char ph, const std::string &name, const std::string &cat, uint64_t ts,
                       uint64_t dur, uint32_t pid, uint32_t tid, const std::string &args) {
  std::string obj = "{\"ph\":\"" + std::string(1, ph) + "\",\"name\":" + quoted(name) +
                    ",\"cat\":" + quoted(cat) + ",\"ts\":" + micros(ts);
  if (ph == 'X')
    obj += ",\"dur\":" + micros(dur);
  else
    obj += ",\"s\":\"t\"";
  obj += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
  return ph == 'X' && args.empty() ? obj + "}" : obj + ",\"args\":{" + args + "}}";
}

// A value as an instant's name shows it: its text output's first line.
std::string arg_label(const Value &v) {
  std::string text = value_text(v);
  size_t start = text.find_first_not_of("\n ");
  text = start == std::string::npos ? "" : text.substr(start);
  return text.substr(0, text.find('\n'));
}

// "NAME=VALUE, ..." of ARGS but retval, and " = RETVAL" where it is among them.
void label_args(const std::vector<std::pair<std::string, Value>> &args, std::string &list,
                std::string &retval) {
  for (const auto &[name, value] : args)
    if (name == "retval")
      retval = " = " + arg_label(value);
    else
      list += (list.empty() ? "" : ", ") + name + "=" + arg_label(value);
}

// A call as strace writes one: "cudaMalloc(devPtr=0x7f.., size=1024) = cudaSuccess", or
// "add = 3" where the entry's arguments are not known (no catalog row).
std::string call_label(const std::string &name, const std::string &list, const std::string &retval,
                       bool unfinished) {
  std::string label = name + (list.empty() ? "" : "(" + list + ")") + retval +
                      (unfinished ? " (unfinished)" : "");
  return label.size() <= 120 ? label : label.substr(0, 117) + "...";
}

// A span, its args left out (they would make every call with other values another frame in
// speedscope, whose aggregate views then list each call apart), and, where it has args, an
// instant at its start that carries them, named by LABEL: Perfetto and chrome://tracing show it
// as a marker at the span's left edge, with the args when clicked; speedscope skips instants.
// Both are one entry of the file, so that its ring keeps or drops them together.
std::string span_json(const std::string &name, const std::string &cat, uint64_t ts, uint64_t dur,
                      uint32_t pid, uint32_t tid, const std::string &args,
                      const std::string &label) {
  std::string span = event_json('X', name, cat, ts, dur, pid, tid, "");
  return args.empty() ? span : span + "," + event_json('i', label, "args", ts, 0, pid, tid, args);
}

} // namespace

Result<std::unique_ptr<TimelineOutput>> TimelineOutput::create(TimelineOptions options) {
  auto file = TimelineFile::open(options.path, {options.max_events, options.max_bytes});
  if (!file)
    return Error{file.error()};
  return std::unique_ptr<TimelineOutput>(new TimelineOutput(std::move(options), std::move(*file)));
}

TimelineOutput::TimelineOutput(TimelineOptions options, std::unique_ptr<TimelineFile> file)
    : options_(std::move(options)), file_(std::move(file)) {}

TimelineOutput::~TimelineOutput() = default;

void TimelineOutput::counted(const std::string &cat) {
  (cat == "call" ? calls_ : cat == "printf" ? printfs_ : gpu_spans_) += 1;
}

void TimelineOutput::write(const Event &e) {
  counted(e.cat);
  last_ts_ = std::max(last_ts_, e.ts + e.dur);
  file_->append(e.ph == 'X' ? span_json(e.name, e.cat, e.ts, e.dur, e.pid, e.tid, e.args, e.label)
                            : event_json(e.ph, e.name, e.cat, e.ts, e.dur, e.pid, e.tid, e.args));
}

void TimelineOutput::release(Open &o) {
  for (const auto &e : o.held)
    file_->append(e);
  o.held.clear();
  o.held_bytes = 0;
}

uint32_t TimelineOutput::track_pid(const EventOrigin &at) const {
  return at.gpu ? at.pid | kGpuPidBit : at.pid;
}

void TimelineOutput::name_host_track(uint32_t pid, uint32_t tid) {
  if (thread_names_.count({pid, tid}))
    return;
  thread_names_[{pid, tid}] = task_name(int(pid), int(tid));
  if (!process_names_.count(pid))
    process_names_[pid] = task_name(int(pid));
}

void TimelineOutput::printf(const Message &message) {
  if (!origin_)
    return; // BEGIN/END and other events without a stamp have no place on a track
  Event e;
  e.ph = 'i';
  e.ts = origin_->nsecs;
  e.pid = track_pid(*origin_);
  e.tid = origin_->tid;
  if (e.pid & kGpuPidBit)
    gpu_tracks_.insert({e.pid, e.tid});
  else
    name_host_track(e.pid, e.tid);
  std::string text = message.joined();
  e.name = first_line(text);
  e.cat = "printf";
  append_member(e.args, "text", quoted(text));
  append_member(e.args, "probe", quoted(origin_->probe));
  origin_.reset();
  write(e);
}

void TimelineOutput::span_edge(const SpanEdge &edge) {
  std::string args, list, retval;
  for (const auto &[name, value] : edge.args)
    append_member(args, name, arg_json(value));
  label_args(edge.args, list, retval);
  name_host_track(edge.at.pid, edge.at.tid);
  auto &stack = open_[{edge.at.pid, edge.at.tid}];
  last_ts_ = std::max(last_ts_, edge.at.nsecs);
  if (!edge.exit) {
    if (stack.size() == kMaxDepth) {
      release(stack.front());
      stack.erase(stack.begin());
      ++unmatched_returns_;
    }
    stack.push_back({edge.name, args, list, edge.at.nsecs, {}, 0});
    return;
  }
  // The innermost open call of this function; a return without one (its entry came before
  // tracing, or was lost) has no span.
  auto it = std::find_if(stack.rbegin(), stack.rend(),
                         [&](const Open &o) { return o.name == edge.name; });
  if (it == stack.rend()) {
    ++unmatched_returns_;
    return;
  }
  size_t at = size_t(stack.rend() - it) - 1;
  Open &o = stack[at];
  Event e;
  e.ts = o.ts;
  e.dur = edge.at.nsecs > o.ts ? edge.at.nsecs - o.ts : 0;
  e.pid = edge.at.pid;
  e.tid = edge.at.tid;
  e.name = edge.name;
  e.cat = "call";
  e.args = o.args;
  if (!args.empty())
    e.args += (e.args.empty() ? "" : ",") + args;
  e.label = call_label(o.name, o.list + (o.list.empty() || list.empty() ? "" : ", ") + list,
                       retval, false);
  std::vector<std::string> held = std::move(o.held);
  for (size_t i = at + 1; i < stack.size(); ++i) // calls whose return was missed
    release(stack[i]);
  stack.resize(at);
  // Events go out as calls return, inner ones first; viewers sort them by start, but of two
  // starting at the same ns they may nest the longer in the shorter if it comes later in the
  // file (chrome://tracing, Perfetto before v48). So a call starting where the call around it
  // started waits for that one and is written after it.
  if (!stack.empty() && stack.back().ts == e.ts && stack.back().held_bytes < kMaxHeldBytes) {
    Open &outer = stack.back();
    outer.held.push_back(span_json(e.name, e.cat, e.ts, e.dur, e.pid, e.tid, e.args, e.label));
    counted(e.cat);
    outer.held_bytes += outer.held.back().size();
    for (auto &h : held) {
      outer.held_bytes += h.size();
      outer.held.push_back(std::move(h));
    }
    return;
  }
  write(e);
  for (const auto &h : held)
    file_->append(h);
}

void TimelineOutput::gpu_launch(const GpuLaunch &launch) {
  kernels_[launch.kernel_index] = launch.kernel;
  uint64_t n = launches_[launch.kernel_index]++;
  if (launch.start_ns == UINT64_MAX || launch.start_ns > launch.end_ns) {
    ++untimed_launches_; // no thread's entry was timed: nothing to draw
    return;
  }
  Event e;
  e.ts = launch.start_ns;
  e.dur = launch.end_ns - launch.start_ns;
  e.pid = launch.pid | kGpuPidBit;
  e.tid = launch.kernel_index;
  e.name = demangle_symbol(launch.kernel); // the mangled name, cut at 63 bytes, stays as is
  e.cat = "gpu";
  append_member(e.args, "kernel", quoted(launch.kernel));
  append_member(e.args, "launch", std::to_string(n));
  e.label = e.name + " launch " + std::to_string(n);
  gpu_tracks_.insert({e.pid, e.tid});
  write(e);
}

Status TimelineOutput::finish() {
  if (finished_)
    return *finished_;
  // Names of the host processes and threads (those that are gone by now keep their numbers),
  // of the GPU process and its kernel tracks.
  std::vector<std::string> names;
  auto metadata = [&](const char *what, uint32_t pid, uint32_t tid, const std::string &name) {
    names.push_back("{\"ph\":\"M\",\"name\":\"" + std::string(what) +
                    "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
                    ",\"args\":{\"name\":" + quoted(name) + "}}");
  };
  for (const auto &[pid, name] : process_names_)
    if (!name.empty())
      metadata("process_name", pid, 0, name);
  for (const auto &[track, name] : thread_names_)
    if (!name.empty())
      metadata("thread_name", track.first, track.second, name);
  std::set<uint32_t> gpu_pids;
  for (const auto &[pid, tid] : gpu_tracks_) {
    if (gpu_pids.insert(pid).second)
      metadata("process_name", pid, 0, "GPU (pid " + std::to_string(pid & ~kGpuPidBit) + ")");
    auto k = kernels_.find(tid);
    metadata("thread_name", pid, tid,
             k != kernels_.end() ? demangle_symbol(k->second) : "kernel #" + std::to_string(tid));
  }
  // Calls still open at the end (gpubt stopped inside them) end where the trace ends, each
  // before the calls it holds; one whose entry was the last event lasts 1 ns (viewers drop a
  // span of none).
  std::vector<std::string> unfinished;
  for (auto &[track, stack] : open_)
    for (Open &o : stack) {
      std::string args = o.args;
      append_member(args, "unfinished", "true");
      counted("call");
      unfinished.push_back(span_json(o.name, "call", o.ts, last_ts_ > o.ts ? last_ts_ - o.ts : 1,
                                     track.first, track.second, args,
                                     call_label(o.name, o.list, "", true)));
      for (auto &h : o.held)
        unfinished.push_back(std::move(h));
    }
  open_.clear();
  auto trailer = [&](uint64_t dropped) {
    dropped_ = dropped;
    return member("displayTimeUnit", quoted("ns")) + "," + quoted("otherData") + ":{" +
           member("tool", quoted("gpubt")) + "," + member("clock", quoted("CLOCK_MONOTONIC")) +
           "," + member("event_limit", std::to_string(options_.max_events)) + "," +
           member("byte_limit", std::to_string(options_.max_bytes)) + "," +
           member("dropped_events", std::to_string(dropped)) + "," +
           member("lost_events", std::to_string(lost_)) + "," +
           member("unmatched_returns", std::to_string(unmatched_returns_)) + "," +
           member("untimed_launches", std::to_string(untimed_launches_)) + "," +
           member("attached_probes", std::to_string(attached_)) + "}";
  };
  finished_ = file_->put_in_place(names, unfinished, trailer);
  if (*finished_ && options_.report) {
    uint64_t kept = calls_ + printfs_ + gpu_spans_ - std::min(dropped_, calls_ + printfs_ + gpu_spans_);
    *options_.report << "gpubt: wrote " << options_.path << ": " << kept << " events (" << calls_
                     << " calls, " << printfs_ << " printfs, " << gpu_spans_ << " gpu launches"
                     << (dropped_ ? ", " + std::to_string(dropped_) + " oldest left out" : "")
                     << "); open it in ui.perfetto.dev, chrome://tracing or speedscope\n";
    if (!kept)
      *options_.report << "WARNING: the timeline is empty: a span needs a function probed at "
                          "both entry and return (uprobe and uretprobe), an instant a printf(), "
                          "a GPU span a gpu probe's launch\n";
  }
  return *finished_;
}

} // namespace gpubt::runtime
