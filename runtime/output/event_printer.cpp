// Event payloads as program_spec.h lays them out, decoded into Output calls.
#include "runtime/output/event_printer.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "runtime/abi/device_abi.h"
#include "runtime/output/format_printf.h"
#include "runtime/output/print_map.h"
#include "runtime/process/user_actions.h"

namespace gpubt::runtime {

std::optional<std::string> format_time(const std::string &strftime_format, std::time_t when) {
  struct tm tm;
  char buf[64]; // bpftrace's STRING_SIZE
  if (!localtime_r(&when, &tm) || std::strftime(buf, sizeof buf, strftime_format.c_str(), &tm) == 0)
    return std::nullopt;
  return std::string(buf);
}

namespace {

// join()'s strings, up to the first empty one, with its delimiter between them.
std::string join_text(const abi::JoinSpec &join, const uint8_t *payload, size_t size) {
  std::string out;
  for (uint32_t i = 0; i < join.args && size_t(i + 1) * join.size <= size; ++i) {
    auto p = reinterpret_cast<const char *>(payload + size_t(i) * join.size);
    size_t n = strnlen(p, join.size);
    if (n == 0)
      break;
    out += (i ? join.delim : "") + std::string(p, n);
  }
  return out;
}

} // namespace

EventPrinter::EventPrinter(const abi::ProgramSpec &spec, Output &out, Symbolizer symbolize,
                           MapReader read_map, UserActionOptions actions)
    : spec_(spec), out_(out), symbolize_(std::move(symbolize)), read_map_(std::move(read_map)),
      actions_(actions) {}

EventOrigin EventPrinter::origin(const uint8_t *stamp) const {
  abi::EventStamp s;
  std::memcpy(&s, stamp, sizeof s);
  EventOrigin o;
  o.nsecs = s.nsecs;
  o.pid = s.pid;
  o.tid = s.tid;
  o.gpu = s.flags & abi::kStampGpu;
  if (s.probe < spec_.probe_names.size())
    o.probe = spec_.probe_names[s.probe];
  return o;
}

void EventPrinter::print_span(const abi::EventHeader &h, const uint8_t *payload, size_t size) {
  if (h.index >= spec_.spans.size() || size < sizeof(abi::EventStamp))
    return;
  const abi::SpanSpec &span = spec_.spans[h.index];
  SpanEdge edge;
  edge.at = origin(payload);
  edge.name = span.name;
  edge.exit = span.exit;
  for (size_t i = 0; i < span.args.size() && i < span.arg_names.size(); ++i) {
    const abi::FormatArg &arg = span.args[i];
    if (arg.offset + arg.type.size > size)
      continue;
    if (i < span.addresses.size() && span.addresses[i]) { // as C's %p
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx",
                    static_cast<unsigned long long>(value_as_int(arg.type, payload + arg.offset)));
      edge.args.emplace_back(span.arg_names[i], Value::of(Value::Kind::Name, hex));
      continue;
    }
    edge.args.emplace_back(span.arg_names[i],
                           make_value(arg.type, payload + arg.offset, spec_, symbolize_));
  }
  out_.span_edge(edge);
}

void EventPrinter::print(const abi::EventHeader &h, const uint8_t *payload, size_t size) {
  switch (static_cast<abi::EventKind>(h.kind)) {
  case abi::EventKind::Printf:
    if (spec_.timeline) { // the stamp is the payload's last bytes
      if (size < sizeof(abi::EventStamp))
        break;
      size -= sizeof(abi::EventStamp);
      out_.origin(origin(payload + size));
    }
    if (h.index < spec_.formats.size() && spec_.formats[h.index].to_stderr) {
      // errorf()/warnf(): after what printed before it, as bpftrace's stderr line comes.
      out_.flush();
      const abi::FormatSpec &f = spec_.formats[h.index];
      if (actions_.errors)
        *actions_.errors << f.before
                         << format_printf(f, payload, size, spec_, symbolize_).joined()
                         << f.after << std::flush;
    } else if (h.index < spec_.formats.size()) {
      out_.printf(format_printf(spec_.formats[h.index], payload, size, spec_, symbolize_));
    }
    break;
  case abi::EventKind::Span:
    print_span(h, payload, size);
    break;
  case abi::EventKind::GpuLaunch:
    if (size >= sizeof(abi::GpuLaunchRecord)) {
      abi::GpuLaunchRecord r;
      std::memcpy(&r, payload, sizeof r);
      GpuLaunch l;
      l.pid = r.pid;
      l.kernel_index = r.kernel_index;
      l.kernel.assign(r.kernel, strnlen(r.kernel, sizeof r.kernel));
      l.start_ns = r.start_ns;
      l.end_ns = r.end_ns;
      out_.gpu_launch(l);
    }
    break;
  case abi::EventKind::PrintValue: {
    if (h.index >= spec_.formats.size() || spec_.formats[h.index].args.empty())
      break;
    const auto &arg = spec_.formats[h.index].args[0];
    if (arg.offset + arg.type.size <= size)
      out_.value(make_value(arg.type, payload + arg.offset, spec_, symbolize_));
    break;
  }
  case abi::EventKind::PrintMap:
    if (read_map_ && h.index < spec_.maps.size()) {
      PrintOptions options;
      if (size >= 16) { // print(@m, top, div); 0 where not given
        uint64_t words[2];
        std::memcpy(words, payload, sizeof words);
        options.top = uint32_t(std::min<uint64_t>(words[0], UINT32_MAX));
        options.div = words[1] ? uint32_t(std::min<uint64_t>(words[1], UINT32_MAX)) : 1;
      }
      print_map(out_, spec_, int(h.index), read_map_(int(h.index)), symbolize_, options);
    }
    break;
  case abi::EventKind::HelperError:
    if (h.index < spec_.helper_errors.size() && size >= 8) {
      int64_t rc;
      std::memcpy(&rc, payload, 8);
      const abi::HelperErrorSpec &e = spec_.helper_errors[h.index];
      out_.helper_error(e.helper, rc, e.line, e.col);
    }
    break;
  case abi::EventKind::Join:
    if (h.index < spec_.joins.size())
      out_.join(join_text(spec_.joins[h.index], payload, size));
    break;
  case abi::EventKind::Time:
    if (h.index < spec_.time_formats.size())
      if (auto text = format_time(spec_.time_formats[h.index], std::time(nullptr)))
        out_.time(*text);
    break;
  case abi::EventKind::System:
    if (actions_.enabled && h.index < spec_.formats.size()) {
      std::string command =
          format_printf(spec_.formats[h.index], payload, size, spec_, symbolize_).joined();
      out_.flush(); // what printed before the command, before what it prints
      out_.command_output(run_command(command));
    }
    break;
  case abi::EventKind::Cat:
    if (actions_.enabled && h.index < spec_.formats.size()) {
      std::string path =
          format_printf(spec_.formats[h.index], payload, size, spec_, symbolize_).joined();
      auto text = read_for_cat(path, actions_.cat_bytes_max);
      if (text)
        out_.file_contents(*text);
      else if (actions_.errors)
        *actions_.errors << "ERROR: " << text.error() << "\n";
    }
    break;
  default:
    break;
  }
}

namespace {

constexpr size_t kRecordHead = sizeof(gpubt_ring_record) + sizeof(abi::EventHeader);

bool device_kind(uint32_t kind) {
  return kind == uint32_t(abi::EventKind::Printf) || kind == uint32_t(abi::EventKind::GpuLaunch);
}

} // namespace

size_t whole_device_records(const uint8_t *bytes, size_t size) {
  size_t pos = 0;
  while (size - pos >= kRecordHead) {
    gpubt_ring_record r;
    abi::EventHeader h;
    std::memcpy(&r, bytes + pos, sizeof r);
    std::memcpy(&h, bytes + pos + sizeof r, sizeof h);
    if (r.size < kRecordHead || r.size % 8 || r.size > size - pos || !device_kind(h.kind))
      break;
    pos += r.size;
  }
  return pos;
}

void EventPrinter::print_ring_records(std::vector<uint8_t> &bytes) {
  size_t pos = 0;
  while (pos + kRecordHead <= bytes.size()) {
    gpubt_ring_record r;
    abi::EventHeader h;
    std::memcpy(&r, bytes.data() + pos, sizeof r);
    std::memcpy(&h, bytes.data() + pos + sizeof r, sizeof h);
    if (r.size < kRecordHead) { // no record: what follows cannot be found
      pos = bytes.size();
      break;
    }
    if (pos + r.size > bytes.size())
      break;
    if (device_kind(h.kind))
      print(h, bytes.data() + pos + kRecordHead, r.size - kRecordHead);
    pos += r.size;
  }
  bytes.erase(bytes.begin(), bytes.begin() + pos);
  out_.flush();
}

} // namespace gpubt::runtime
