// The one decoder of the events gpubt prints, whichever side sent them: host ring-buffer
// events (runtime/bpf/session.h) and the GPU agent's records (runtime/abi/device_abi.h) carry
// the same header and payload, and both come here to become Output calls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {

// time(fmt): strftime of WHEN in local time (bpftrace's 64-byte buffer); nothing when empty.
std::optional<std::string> format_time(const std::string &strftime_format, std::time_t when);

// system() and cat() (host probes only): the command runs and the file is read here, as their
// event arrives, so that what they print lands in event order.
struct UserActionOptions {
  bool enabled = false;           // off: their events print nothing (a GPU printer's case)
  size_t cat_bytes_max = 10240;   // BPFTRACE_CAT_BYTES_MAX
  std::ostream *errors = nullptr; // cat()'s "failed to open file"
};

// The bytes of BYTES that are whole gpubt_ring_record-framed records of the kinds a gpu probe
// makes (Printf, GpuLaunch), counted from the front: each at least its headers, a multiple of 8
// and within BYTES. An agent's Events frame holds whole records; past this length it is not one.
size_t whole_device_records(const uint8_t *bytes, size_t size);

class EventPrinter {
public:
  // READ_MAP answers print(@m) events (host maps); without it they print nothing.
  using MapReader = std::function<MapData(int map_index)>;
  EventPrinter(const abi::ProgramSpec &spec, Output &out, Symbolizer symbolize,
               MapReader read_map = nullptr, UserActionOptions actions = {});

  // Printf, PrintValue, PrintMap, Time, System and Cat print; Span and GpuLaunch (and printf's
  // stamp) go to the timeline's Output calls; exit, clear and zero are the session's.
  void print(const abi::EventHeader &header, const uint8_t *payload, size_t size);

  // The complete gpubt_ring_record-framed events at the front of BYTES; removes them. Only
  // the kinds a gpu probe makes (Printf, GpuLaunch) print: the records come from the traced
  // process, which may be another user's.
  void print_ring_records(std::vector<uint8_t> &bytes);

  Output &output() { return out_; }

private:
  EventOrigin origin(const uint8_t *stamp) const; // an abi::EventStamp's bytes
  void print_span(const abi::EventHeader &h, const uint8_t *payload, size_t size);

  const abi::ProgramSpec &spec_;
  Output &out_;
  Symbolizer symbolize_;
  MapReader read_map_;
  UserActionOptions actions_;
};

} // namespace gpubt::runtime
