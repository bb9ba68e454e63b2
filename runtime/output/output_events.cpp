// bpftrace 0.17's TextOutput/JsonOutput message(), value(), attached_probes(), lost_events().
#include "runtime/output/output_events.h"

#include "runtime/output/value_format.h"

namespace gpubt::runtime {

namespace {

void json_message(std::ostream &out, const char *type, const std::string &msg) {
  out << "{\"type\": \"" << type << "\", \"data\": \"" << json_escape(msg) << "\"}\n";
}

void json_count(std::ostream &out, const char *type, const char *field, uint64_t n) {
  out << "{\"type\": \"" << type << "\", \"data\": {\"" << field << "\": " << n << "}}\n";
}

} // namespace


static void print_message(std::ostream &out, const char *type, const std::string &text,
                          OutputFormat format) {
  if (format == OutputFormat::Json)
    json_message(out, type, text);
  else
    out << text;
}

void print_printf(std::ostream &out, const std::string &text, OutputFormat format) {
  print_message(out, "printf", text, format);
}

void print_command_output(std::ostream &out, const std::string &text, OutputFormat format) {
  print_message(out, "syscall", text, format);
}

void print_cat(std::ostream &out, const std::string &text, OutputFormat format) {
  print_message(out, "cat", text, format);
}

void print_time(std::ostream &out, const std::string &strftime_format, std::time_t when,
                OutputFormat format) {
  struct tm tm;
  char buf[64]; // bpftrace's STRING_SIZE
  if (!localtime_r(&when, &tm) || std::strftime(buf, sizeof buf, strftime_format.c_str(), &tm) == 0)
    return;
  if (format == OutputFormat::Json)
    json_message(out, "time", buf);
  else
    out << buf;
}

void print_value(std::ostream &out, const abi::ValueType &type, const uint8_t *data,
                 const abi::ProgramSpec &spec, const Symbolizer &symbolize, OutputFormat format) {
  if (format == OutputFormat::Json)
    out << "{\"type\": \"value\", \"data\": " << format_value_json(type, data, spec, symbolize)
        << "}\n";
  else
    out << format_value(type, data, spec, symbolize) << "\n";
}

void print_attached_probes(std::ostream &out, uint64_t count, OutputFormat format) {
  if (format == OutputFormat::Json)
    json_count(out, "attached_probes", "probes", count);
  else
    out << "Attaching " << count << (count == 1 ? " probe...\n" : " probes...\n");
}

void print_lost_events(std::ostream &out, uint64_t count, OutputFormat format) {
  if (format == OutputFormat::Json)
    json_count(out, "lost_events", "events", count);
  else
    out << "Lost " << count << " events\n";
}

} // namespace gpubt::runtime
