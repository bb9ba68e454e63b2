// What gpubt prints, as one interface with an implementation per format (bpftrace's Output):
// callers decode events and maps into Values once; each format only lays them out.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/abi/result.h"
#include "runtime/output/value.h"

namespace gpubt::runtime {

// Json: bpftrace 0.17's -f json, byte for byte. JsonKeys (-f json-keys): the same, but a keyed
// map is a list of {"key": [typed values], "value": ...} entries a program can take apart.
enum class OutputFormat { Text, Json, JsonKeys };

// A format whose stream is for programs (JSON: one object a line): nothing else may write into
// it, so the -c program's stdout is sent elsewhere when it goes to stdout.
bool is_machine_readable(OutputFormat format);

// Whose text layout: bpftrace 0.17's byte for byte (the default), or bpftrace head's, where
// its newer releases changed it: "Attached N probes" on stderr, a histogram's "@:" header
// without a space, stats as `{ .count = 3, .average = 2, .total = 6 }` (GPUBT_OUTPUT_STYLE).
enum class OutputStyle { Bpftrace017, BpftraceHead };

struct OutputOptions {
  // Text output shows control characters in the traced program's strings as escapes
  // ("\x1b"); raw writes them as they are (--raw-strings).
  bool raw_strings = false;
  OutputStyle style = OutputStyle::Bpftrace017;
  std::ostream *err = nullptr; // bpftrace head's diagnostics (null: with the output)
};

// A printf() result: the script's own text, and pieces that came from the traced program
// (a %s argument), which text output escapes.
struct Message {
  struct Piece {
    std::string text;
    bool traced = false;
  };
  std::vector<Piece> pieces;
  std::string joined() const;
};

// One map, decoded: rows already ordered, trimmed to `top` and divided by `div`.
struct MapView {
  // Stats: avg() and stats(); Hist: hist() and lhist(); TimeSeries: tseries()
  enum class Kind { Plain, Stats, Hist, TimeSeries };
  std::string name;
  Kind kind = Kind::Plain;
  abi::AggKind agg = abi::AggKind::None; // which function filled it (metrics: counter or gauge)
  bool is_signed = false;                // Count, Sum, Min, Max, None: whether values may be < 0
  bool keyed = false;
  struct Row {
    std::vector<Value> key; // one Value per key argument
    Value value;
  };
  std::vector<Row> rows;
};

// --timeline: where and when an event happened (abi::EventStamp, decoded).
struct EventOrigin {
  uint64_t nsecs = 0; // CLOCK_MONOTONIC
  uint32_t pid = 0;
  uint32_t tid = 0; // gpu: the agent's index of the kernel
  bool gpu = false;
  std::string probe;
};

// One edge of a span: a function's entry, with its arguments, or its return, with retval.
struct SpanEdge {
  EventOrigin at;
  std::string name;
  bool exit = false;
  std::vector<std::pair<std::string, Value>> args;
};

// A gpu launch, first thread's start to last thread's exit (abi::GpuLaunchRecord).
struct GpuLaunch {
  uint32_t pid = 0;
  uint32_t kernel_index = 0;
  std::string kernel;
  uint64_t start_ns = 0, end_ns = 0;
};

// The oldest launch a process runs now, as its agent last said (running_launches.h).
struct RunningKernel {
  uint32_t pid = 0;
  std::string kernel; // the device name, as `kernel` gives it
  double age_s = 0;
};

class Output {
public:
  virtual ~Output() = default;
  virtual void printf(const Message &message) = 0;
  virtual void time(const std::string &text) = 0; // strftime's result, no newline of its own
  virtual void value(const Value &value) = 0;     // print(expr) of a non-map value
  // What system()'s command printed and the bytes cat() read, as they are (bpftrace's
  // "syscall" and "cat" messages): text output does not escape them, as bpftrace does not.
  virtual void command_output(const std::string &text) = 0;
  virtual void file_contents(const std::string &text) = 0;
  virtual void map(const MapView &map) = 0;
  // -k: a BPF helper failed where the script's line:col reads or deletes (retcode: its error,
  // negative, or 0 for a map lookup that found nothing).
  virtual void helper_error(const std::string &helper, int64_t retcode, uint32_t line,
                            uint32_t col) {}
  // join()'s line: text formats print it as a line of its own.
  virtual void join(const std::string &text) { printf(Message{{{text + "\n", false}}}); }
  virtual void exit_maps_begin() = 0; // before the maps printed at exit
  virtual void attached_probes(uint64_t count) = 0;
  virtual void lost_events(uint64_t count) = 0;
  // gpubt's health beyond bpftrace's messages, for formats that report it (metrics): gpu map
  // updates dropped on a full table, and the processes traced (-c/-p target alive: 1).
  virtual void dropped_gpu_updates(uint64_t) {}
  virtual void attached_processes(uint64_t) {}
  // When the agents watch their launches (gpu:hang, --metrics with gpu probes): per process
  // that runs one, its oldest launch.
  virtual void running_kernels(const std::vector<RunningKernel> &) {}
  virtual void flush() = 0;
  virtual OutputStyle style() const { return OutputStyle::Bpftrace017; }
  // The timeline's events; formats that lay out no time ignore them. origin() comes just
  // before the printf() it places.
  virtual void origin(const EventOrigin &) {}
  virtual void span_edge(const SpanEdge &) {}
  virtual void gpu_launch(const GpuLaunch &) {}
  // The trace has ended, before the maps print at exit: a format that writes a file of its own
  // (--timeline) puts it in place now, so that a signal while the maps print cannot lose it.
  // Once; later calls answer the same.
  virtual Status finish() { return Ok{}; }
};

std::unique_ptr<Output> make_output(OutputFormat format, std::ostream &out,
                                    const OutputOptions &options = {});

} // namespace gpubt::runtime
