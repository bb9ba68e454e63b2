// --timeline and --timeline-events (see timeline_options.h).
#include "driver/timeline_options.h"

#include <cstdlib>
#include <string>

namespace gpubt::driver {

namespace {
enum { OptTimeline = 1024, OptTimelineEvents, OptTimelineBytes };
}

const char kTimelineUsage[] =
    "    --timeline FILE  also write a trace (trace-event JSON, for ui.perfetto.dev or\n"
    "                   chrome://tracing): calls probed at entry and return, printf()s, gpu\n"
    "                   launches\n"
    "    --timeline-events N  keep the newest N events in that trace (default 1000000)\n"
    "    --timeline-mb N  and at most N MiB of them (default 256); gpubt's memory does not grow\n"
    "                   with the trace: events go to the file's folder as they come\n";

std::vector<option> timeline_long_options() {
  return {{"timeline", required_argument, nullptr, OptTimeline},
          {"timeline-events", required_argument, nullptr, OptTimelineEvents},
          {"timeline-mb", required_argument, nullptr, OptTimelineBytes}};
}

std::optional<Status> apply_timeline_option(int c, const char *arg,
                                            runtime::TimelineOptions &options) {
  switch (c) {
  case OptTimeline:
    if (!*arg)
      return make_error("--timeline takes a file name");
    options.path = arg;
    return Status(Ok{});
  case OptTimelineEvents: {
    char *end = nullptr;
    unsigned long long v = std::strtoull(arg, &end, 10);
    if (!*arg || *end || *arg == '-' || v < 1 || v > 100000000ull)
      return make_error(std::string("--timeline-events takes a number from 1 to 100000000, not '") +
                        arg + "'");
    options.max_events = static_cast<size_t>(v);
    return Status(Ok{});
  }
  case OptTimelineBytes: {
    char *end = nullptr;
    unsigned long long v = std::strtoull(arg, &end, 10);
    if (!*arg || *end || *arg == '-' || v < 1 || v > 1048576ull)
      return make_error(std::string("--timeline-mb takes a number from 1 to 1048576, not '") + arg +
                        "'");
    options.max_bytes = static_cast<size_t>(v) << 20;
    return Status(Ok{});
  }
  default:
    return std::nullopt;
  }
}

} // namespace gpubt::driver
