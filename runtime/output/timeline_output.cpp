// The trace-event JSON of --timeline (see timeline_output.h). Spans are closed here, as
// complete ("X") events, so that the ring never keeps one half of a span without the other.
#include "runtime/output/timeline_output.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "runtime/output/escape.h"
#include "runtime/process/demangle.h"

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
// fits); larger ones, and everything else, are strings.
std::string arg_json(const Value &v) {
  if (v.kind == Value::Kind::Number && !v.text.empty() && v.text.size() <= 15)
    return v.text;
  return quoted(value_text(v));
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

} // namespace

TimelineOutput::TimelineOutput(TimelineOptions options, std::ostream &errors)
    : options_(std::move(options)), errors_(errors) {}

Status TimelineOutput::check_writable(const std::string &path) {
  std::string tmp = path + ".tmp";
  if (!std::ofstream(tmp, std::ios::binary | std::ios::trunc))
    return make_error("--timeline: cannot write " + tmp);
  std::remove(tmp.c_str());
  return Ok{};
}

TimelineOutput::~TimelineOutput() {
  if (options_.path.empty())
    return;
  std::string tmp = options_.path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << json();
    f.close();
    if (!f) {
      errors_ << "ERROR: --timeline: cannot write " << tmp << "\n";
      return;
    }
  }
  if (std::rename(tmp.c_str(), options_.path.c_str()) != 0)
    errors_ << "ERROR: --timeline: cannot rename " << tmp << " to " << options_.path << "\n";
}

void TimelineOutput::add(Event e) {
  last_ts_ = std::max(last_ts_, e.ts + e.dur);
  if (options_.max_events == 0) {
    ++dropped_;
    return;
  }
  if (ring_.size() == options_.max_events) {
    ring_.pop_front();
    ++dropped_;
  }
  ring_.push_back(std::move(e));
}

uint32_t TimelineOutput::track_pid(const EventOrigin &at) const {
  return at.gpu ? at.pid | kGpuPidBit : at.pid;
}

void TimelineOutput::printf(const Message &message) {
  if (!origin_)
    return; // BEGIN/END and other events without a stamp have no place on a track
  Event e;
  e.ph = 'i';
  e.ts = origin_->nsecs;
  e.pid = track_pid(*origin_);
  e.tid = origin_->tid;
  std::string text = message.joined();
  e.name = first_line(text);
  e.cat = "printf";
  append_member(e.args, "text", quoted(text));
  append_member(e.args, "probe", quoted(origin_->probe));
  origin_.reset();
  add(std::move(e));
}

void TimelineOutput::span_edge(const SpanEdge &edge) {
  std::string args;
  for (const auto &[name, value] : edge.args)
    append_member(args, name, arg_json(value));
  auto &stack = open_[{edge.at.pid, edge.at.tid}];
  last_ts_ = std::max(last_ts_, edge.at.nsecs);
  if (!edge.exit) {
    if (stack.size() == kMaxDepth) {
      stack.erase(stack.begin());
      ++unmatched_returns_;
    }
    stack.push_back({edge.name, args, edge.at.nsecs});
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
  Event e;
  e.ts = it->ts;
  e.dur = edge.at.nsecs > it->ts ? edge.at.nsecs - it->ts : 0;
  e.pid = edge.at.pid;
  e.tid = edge.at.tid;
  e.name = edge.name;
  e.cat = "call";
  e.args = it->args;
  if (!args.empty())
    e.args += (e.args.empty() ? "" : ",") + args;
  stack.erase(std::next(it).base(), stack.end());
  add(std::move(e));
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
  add(std::move(e));
}

std::string TimelineOutput::json() const {
  std::vector<const Event *> events;
  for (const Event &e : ring_)
    events.push_back(&e);
  // By start; of two starting together the longer first, so that a viewer nests the other in
  // it (the ring holds calls in the order they returned: inner ones first).
  std::stable_sort(events.begin(), events.end(), [](const Event *a, const Event *b) {
    return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
  });
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string &obj) {
    out += (first ? "" : ",\n") + obj;
    first = false;
  };
  // Names of the GPU process and its kernel tracks.
  std::set<std::pair<uint32_t, uint32_t>> gpu_tracks;
  for (const Event *e : events)
    if (e->pid & kGpuPidBit)
      gpu_tracks.insert({e->pid, e->tid});
  std::set<uint32_t> gpu_pids;
  for (const auto &[pid, tid] : gpu_tracks) {
    if (gpu_pids.insert(pid).second)
      emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":0,\"args\":{\"name\":" +
           quoted("GPU (pid " + std::to_string(pid & ~kGpuPidBit) + ")") + "}}");
    auto k = kernels_.find(tid);
    std::string name =
        k != kernels_.end() ? demangle_symbol(k->second) : "kernel #" + std::to_string(tid);
    emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + quoted(name) + "}}");
  }
  auto event = [&](const Event &e) {
    std::string obj = "{\"ph\":\"" + std::string(1, e.ph) + "\",\"name\":" + quoted(e.name) +
                      ",\"cat\":" + quoted(e.cat) + ",\"ts\":" + micros(e.ts);
    if (e.ph == 'X')
      obj += ",\"dur\":" + micros(e.dur);
    else
      obj += ",\"s\":\"t\"";
    obj += ",\"pid\":" + std::to_string(e.pid) + ",\"tid\":" + std::to_string(e.tid) +
           ",\"args\":{" + e.args + "}}";
    emit(obj);
  };
  for (const Event *e : events)
    event(*e);
  // Calls still open at the end (gpubt stopped inside them) end where the trace ends.
  for (const auto &[track, stack] : open_)
    for (const Open &o : stack) {
      Event e;
      e.ts = o.ts;
      e.dur = last_ts_ > o.ts ? last_ts_ - o.ts : 0;
      e.pid = track.first;
      e.tid = track.second;
      e.name = o.name;
      e.cat = "call";
      e.args = o.args;
      append_member(e.args, "unfinished", "true");
      event(e);
    }
  out += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{";
  out += member("tool", quoted("gpubt")) + "," +
         member("clock", quoted("CLOCK_MONOTONIC")) + "," +
         member("event_limit", std::to_string(options_.max_events)) + "," +
         member("dropped_events", std::to_string(dropped_)) + "," +
         member("lost_events", std::to_string(lost_)) + "," +
         member("unmatched_returns", std::to_string(unmatched_returns_)) + "," +
         member("untimed_launches", std::to_string(untimed_launches_)) + "," +
         member("attached_probes", std::to_string(attached_));
  return out + "}}\n";
}

} // namespace gpubt::runtime
