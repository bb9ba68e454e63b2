// --timeline: stamped events decoded from host events and GPU ring records become the trace's
// spans and instants; the ring keeps the newest events and counts the rest.
#include "runtime/output/timeline_output.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "runtime/abi/device_abi.h"
#include "runtime/output/event_printer.h"
#include "runtime/output/tee_output.h"
#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

Bytes header(abi::EventKind kind, uint32_t index) { return cat({le(uint32_t(kind)), le(index)}); }

Bytes stamp(uint64_t ns, uint32_t pid, uint32_t tid, uint32_t probe, uint32_t flags = 0) {
  return cat({u64(ns), le(pid), le(tid), le(probe), le(flags)});
}

// As the agent frames a device record (device_abi.h): {size, commit}, then the event.
Bytes record(const Bytes &event) {
  uint32_t size = uint32_t(sizeof(gpubt_ring_record) + event.size());
  return cat({le(size), le(uint32_t(1)), event});
}

// A timeline writing into a file of its own; trace() puts the file in place and reads it.
struct Timeline {
  explicit Timeline(TimelineOptions options = {}) {
    static int n = 0;
    options.path = ::testing::TempDir() + "timeline_output_test_" + std::to_string(getpid()) +
                   "_" + std::to_string(n++) + ".json";
    path = options.path;
    auto made = TimelineOutput::create(options);
    EXPECT_TRUE(made) << made.error();
    out = std::move(*made);
  }
  ~Timeline() { std::remove(path.c_str()); }
  std::string trace() {
    auto st = out->finish();
    EXPECT_TRUE(st) << st.error();
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  std::string path;
  std::unique_ptr<TimelineOutput> out;
};

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

// uprobe/uretprobe of cudaMalloc (its size argument, its retval by enum name) and a printf.
abi::ProgramSpec timeline_spec() {
  abi::ProgramSpec spec;
  spec.timeline = true;
  spec.probe_names = {"uprobe:cudart:cudaMalloc", "uretprobe:cudart:cudaMalloc",
                      "gpu:kretprobe:scale"};
  spec.formats.push_back({"size %d\n", {{int_t(), 0}}});
  ValueType err{ValueType::Enum, 4};
  err.enum_name = "cudaError_t";
  spec.enums["cudaError_t"] = {{0, "cudaSuccess"}, {2, "cudaErrorMemoryAllocation"}};
  spec.spans.push_back({"cudaMalloc", false, {"size"}, {{uint_t(), 24}}});
  spec.spans.push_back({"cudaMalloc", true, {"retval"}, {{err, 24}}});
  return spec;
}

TEST(TimelineOutput, HostSpansAndPrintfsFromStampedEvents) {
  abi::ProgramSpec spec = timeline_spec();
  std::ostringstream text;
  Timeline teed;
  auto out = make_tee_output(make_output(OutputFormat::Text, text), std::move(teed.out));
  EventPrinter printer(spec, *out, nullptr);
  auto send = [&](abi::EventKind kind, uint32_t index, const Bytes &payload) {
    printer.print({uint32_t(kind), index}, payload.data(), payload.size());
  };
  send(abi::EventKind::Span, 0, cat({stamp(1000000, 7, 8, 0), u64(4096)}));
  send(abi::EventKind::Printf, 0, cat({i64(4096), stamp(1500000, 7, 8, 0)}));
  send(abi::EventKind::Span, 1, cat({stamp(3000250, 7, 8, 1), le(uint32_t(2)), le(uint32_t(0))}));
  // A return whose entry came before tracing: no span.
  send(abi::EventKind::Span, 1, cat({stamp(4000000, 7, 9, 1), u64(0)}));
  EXPECT_EQ(text.str(), "size 4096\n"); // the main output prints as before

  // The tee hands the same calls to the timeline; read what it would write.
  Timeline tl;
  EventPrinter direct(spec, *tl.out, nullptr);
  for (const auto &[kind, index, payload] :
       std::vector<std::tuple<abi::EventKind, uint32_t, Bytes>>{
           {abi::EventKind::Span, 0, cat({stamp(1000000, 7, 8, 0), u64(4096)})},
           {abi::EventKind::Printf, 0, cat({i64(4096), stamp(1500000, 7, 8, 0)})},
           {abi::EventKind::Span, 1, cat({stamp(3000250, 7, 8, 1), le(uint32_t(2)), le(uint32_t(0))})},
           {abi::EventKind::Span, 1, cat({stamp(4000000, 7, 9, 1), u64(0)})}})
    direct.print({uint32_t(kind), index}, payload.data(), payload.size());
  std::string json = tl.trace();
  // The span has no args (speedscope would name its frame by them); the instant at its start,
  // named as strace writes the call, carries them.
  EXPECT_NE(json.find("{\"ph\":\"X\",\"name\":\"cudaMalloc\",\"cat\":\"call\",\"ts\":1000.000,"
                      "\"dur\":2000.250,\"pid\":7,\"tid\":8},{\"ph\":\"i\",\"name\":"
                      "\"cudaMalloc(size=4096) = cudaErrorMemoryAllocation\",\"cat\":\"args\","
                      "\"ts\":1000.000,\"s\":\"t\",\"pid\":7,\"tid\":8,\"args\":{\"size\":4096,"
                      "\"retval\":\"cudaErrorMemoryAllocation\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"ph\":\"i\",\"name\":\"size 4096\",\"cat\":\"printf\",\"ts\":1500.000,"
                      "\"s\":\"t\",\"pid\":7,\"tid\":8,\"args\":{\"text\":\"size 4096\\n\","
                      "\"probe\":\"uprobe:cudart:cudaMalloc\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"unmatched_returns\":1"), std::string::npos) << json;
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 1u);
}

TEST(TimelineOutput, GpuLaunchRecordsAndGpuPrintfsShareTheKernelTrack) {
  abi::ProgramSpec spec = timeline_spec();
  Timeline tl;
  EventPrinter printer(spec, *tl.out, nullptr);
  Bytes name = str("scale", abi::kLaunchKernelNameSize);
  Bytes launch = cat({header(abi::EventKind::GpuLaunch, 0), u64(5000000), u64(5400000),
                      le(uint32_t(7)), le(uint32_t(3)), name});
  Bytes gpu_printf = cat({header(abi::EventKind::Printf, 0), i64(1),
                          stamp(5100000, 7, 3, 2, abi::kStampGpu)});
  // A launch no entry was timed for (launch_start still UINT64_MAX) is counted, not drawn.
  Bytes untimed = cat({header(abi::EventKind::GpuLaunch, 0), u64(UINT64_MAX), u64(5400000),
                       le(uint32_t(7)), le(uint32_t(3)), name});
  Bytes bytes = cat({record(gpu_printf), record(launch), record(untimed)});
  printer.print_ring_records(bytes);
  EXPECT_TRUE(bytes.empty());
  std::string json = tl.trace();
  uint32_t gpu_pid = 7 | 1u << 30;
  std::string track = "\"pid\":" + std::to_string(gpu_pid) + ",\"tid\":3";
  EXPECT_NE(json.find("{\"ph\":\"X\",\"name\":\"scale\",\"cat\":\"gpu\",\"ts\":5000.000,"
                      "\"dur\":400.000," + track + "},{\"ph\":\"i\",\"name\":\"scale launch 0\","
                      "\"cat\":\"args\",\"ts\":5000.000,\"s\":\"t\"," + track +
                      ",\"args\":{\"kernel\":\"scale\",\"launch\":0}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"cat\":\"printf\",\"ts\":5100.000,\"s\":\"t\"," + track), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"thread_name\"," + track + ",\"args\":{\"name\":\"scale\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"GPU (pid 7)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"untimed_launches\":1"), std::string::npos) << json;
  // For the viewer: ctest's `timeline` imports this trace of decoded GPU records in speedscope.
  std::ofstream(std::string(GPUBT_BINARY_DIR) + "/timeline_gpu_records.json") << json;
}

TEST(TimelineOutput, RingKeepsTheNewestEventsAndCountsTheDropped) {
  Timeline tl(TimelineOptions{"", 2});
  for (int i = 0; i < 5; ++i) {
    tl.out->span_edge({{uint64_t(1000 * i), 1, 1, false, ""}, "f", false, {}});
    tl.out->span_edge({{uint64_t(1000 * i + 500), 1, 1, false, ""}, "f", true, {}});
  }
  std::string json = tl.trace();
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 2u) << json;
  EXPECT_NE(json.find("\"ts\":3.000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ts\":4.000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"event_limit\":2,\"byte_limit\":268435456,\"dropped_events\":3"), std::string::npos) << json;
}

// A call still running when tracing stops ends where the trace ends, marked unfinished; nested
// calls close innermost first.
TEST(TimelineOutput, NestedAndUnfinishedCalls) {
  Timeline tl;
  tl.out->span_edge({{1000, 1, 2, false, ""}, "outer", false, {}});
  tl.out->span_edge({{2000, 1, 2, false, ""}, "inner", false, {}});
  tl.out->span_edge({{3000, 1, 2, false, ""}, "inner", true, {}});
  tl.out->span_edge({{5000, 1, 2, false, ""}, "other", false, {}});
  tl.out->span_edge({{9000, 1, 3, false, ""}, "g", true, {}}); // unmatched, but moves the end
  std::string json = tl.trace();
  EXPECT_NE(json.find("\"name\":\"inner\",\"cat\":\"call\",\"ts\":2.000,\"dur\":1.000"),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"name\":\"outer\",\"cat\":\"call\",\"ts\":1.000,\"dur\":8.000,\"pid\":1,"
                      "\"tid\":2},{\"ph\":\"i\",\"name\":\"outer (unfinished)\",\"cat\":\"args\","
                      "\"ts\":1.000,\"s\":\"t\",\"pid\":1,\"tid\":2,\"args\":{\"unfinished\":true}}"),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"name\":\"other\",\"cat\":\"call\",\"ts\":5.000,\"dur\":4.000"),
            std::string::npos) << json;
}

// Calls that start together (the clock's tick) are written outer first, so viewers nest them.
TEST(TimelineOutput, CallsStartingTogetherAreWrittenOuterFirst) {
  Timeline tl;
  tl.out->span_edge({{1000, 1, 2, false, ""}, "outer", false, {}});
  tl.out->span_edge({{1000, 1, 2, false, ""}, "inner", false, {}});
  tl.out->span_edge({{2000, 1, 2, false, ""}, "inner", true, {}});
  tl.out->span_edge({{3000, 1, 2, false, ""}, "outer", true, {}});
  std::string json = tl.trace();
  EXPECT_LT(json.find("\"name\":\"outer\""), json.find("\"name\":\"inner\"")) << json;
}

// The byte limit keeps the newest events that fit, whole.
TEST(TimelineOutput, ByteLimitKeepsTheNewestEventsThatFit) {
  Timeline tl(TimelineOptions{"", 1000, 1000});
  for (int i = 0; i < 40; ++i) {
    tl.out->span_edge({{uint64_t(1000 * i), 1, 1, false, ""}, "f", false, {}});
    tl.out->span_edge({{uint64_t(1000 * i + 500), 1, 1, false, ""}, "f", true, {}});
  }
  std::string json = tl.trace();
  size_t kept = count(json, "\"ph\":\"X\"");
  EXPECT_GT(kept, 5u) << json;
  EXPECT_LT(kept, 40u) << json;
  EXPECT_NE(json.find("\"ts\":39.000"), std::string::npos) << json; // the newest is there
  EXPECT_EQ(json.find("\"ts\":0.000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dropped_events\":" + std::to_string(40 - kept)), std::string::npos)
      << json;
}

TEST(TimelineOutput, FileIsPutInPlaceAtFinishAndOnlyThen) {
  std::string folder = ::testing::TempDir() + "timeline_finish_" + std::to_string(getpid());
  mkdir(folder.c_str(), 0700);
  std::string path = folder + "/t.json";
  std::ofstream(path) << "old";
  {
    auto tl = TimelineOutput::create({path, 10});
    ASSERT_TRUE(tl) << tl.error();
    (*tl)->span_edge({{1000, 1, 2, false, ""}, "f", false, {}});
    (*tl)->span_edge({{2000, 1, 2, false, ""}, "f", true, {}});
  } // not finished: FILE is as it was
  std::stringstream before;
  before << std::ifstream(path).rdbuf();
  EXPECT_EQ(before.str(), "old");
  {
    auto tl = TimelineOutput::create({path, 10});
    ASSERT_TRUE(tl) << tl.error();
    (*tl)->span_edge({{1000, 1, 2, false, ""}, "f", false, {}});
    (*tl)->span_edge({{2000, 1, 2, false, ""}, "f", true, {}});
    ASSERT_TRUE((*tl)->finish());
  }
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  EXPECT_NE(ss.str().find("\"name\":\"f\""), std::string::npos) << ss.str();
  EXPECT_EQ(ss.str().substr(0, 15), "{\"traceEvents\":");
  // Nothing else is left in the folder: the segments had no name, the temporary was renamed.
  std::remove(path.c_str());
  EXPECT_EQ(rmdir(folder.c_str()), 0) << "files left in " << folder;
  auto bad = TimelineOutput::create({"/nonexistent/dir/t.json", 10});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "--timeline: cannot write /nonexistent/dir/t.json: No such file or directory");
}

} // namespace
} // namespace gpubt::runtime

namespace gpubt::runtime {
namespace {

// A call on a thread with a name of its own: its track is named by the process's comm and the
// thread's, read from /proc while it lives; an address argument is written in hex.
TEST(TimelineOutput, HostTracksAreNamedByCommAndAddressesAreHex) {
  abi::ProgramSpec spec = timeline_spec();
  spec.spans[0] = {"cudaFree", false, {"devPtr"}, {{uint_t(), 24}}, {true}};
  spec.spans[1] = {"cudaFree", true, {"retval"}, {{uint_t(), 24}}};
  Timeline tl;
  EventPrinter printer(spec, *tl.out, nullptr);
  uint32_t pid = uint32_t(getpid()), tid = 0;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "tl_worker");
    tid = uint32_t(gettid());
    Bytes entry = cat({stamp(1000, pid, tid, 0), u64(0x7f00dead0000)});
    Bytes exit = cat({stamp(2000, pid, tid, 1), u64(0)});
    printer.print({uint32_t(abi::EventKind::Span), 0}, entry.data(), entry.size());
    printer.print({uint32_t(abi::EventKind::Span), 1}, exit.data(), exit.size());
  });
  worker.join();
  std::string comm;
  std::getline(std::ifstream("/proc/self/comm"), comm);
  std::string json = tl.trace();
  EXPECT_NE(json.find("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
                      ",\"tid\":0,\"args\":{\"name\":\"" + comm + "\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
                      ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"tl_worker\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"cudaFree(devPtr=0x7f00dead0000) = 0\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"args\":{\"devPtr\":\"0x7f00dead0000\",\"retval\":0}"), std::string::npos)
      << json;
}

} // namespace
} // namespace gpubt::runtime
