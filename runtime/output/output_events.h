// The non-map lines bpftrace 0.17 writes, in text or as -f json objects: printf() and time()
// output, print(value), the attached-probes count and lost events.
#pragma once
#include <cstdint>
#include <ctime>
#include <ostream>
#include <string>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// Text: as is. JSON: {"type": "printf", "data": "..."}.
void print_printf(std::ostream &out, const std::string &text, OutputFormat format);

// The output of system() and the contents cat() read: text as is; JSON {"type": "syscall"
// or "cat", "data": "..."} (bpftrace's names).
void print_command_output(std::ostream &out, const std::string &text, OutputFormat format);
void print_cat(std::ostream &out, const std::string &text, OutputFormat format);

// time(fmt): strftime of `when` in local time (bpftrace's 64-byte buffer; an empty result
// prints nothing). Text has no newline of its own.
void print_time(std::ostream &out, const std::string &strftime_format, std::time_t when,
                OutputFormat format);

// print(expr) of a non-map value: "5\n"; JSON {"type": "value", "data": 5}.
void print_value(std::ostream &out, const abi::ValueType &type, const uint8_t *data,
                 const abi::ProgramSpec &spec, const Symbolizer &symbolize, OutputFormat format);

// "Attaching 1 probe..." / "Attaching N probes..."; JSON {"type": "attached_probes", ...}.
void print_attached_probes(std::ostream &out, uint64_t count, OutputFormat format);

// "Lost N events"; JSON {"type": "lost_events", "data": {"events": N}}.
void print_lost_events(std::ostream &out, uint64_t count, OutputFormat format);

} // namespace gpubt::runtime
