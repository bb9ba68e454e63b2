// Renders one typed value as bpftrace 0.17 prints it (Output::value_to_str and friends).
#include "runtime/output/value_format.h"
#include "runtime/output/strftime_format.h"
#include "runtime/process/demangle.h"

#include <cstring>
#include <vector>

namespace gpubt::runtime {

using abi::ValueType;

int64_t read_int(const uint8_t *data, uint32_t size, bool is_signed) {
  switch (size) {
  case 1: {
    uint8_t v = data[0];
    return is_signed ? int64_t(int8_t(v)) : int64_t(v);
  }
  case 2: {
    uint16_t v;
    std::memcpy(&v, data, 2);
    return is_signed ? int64_t(int16_t(v)) : int64_t(v);
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, data, 4);
    return is_signed ? int64_t(int32_t(v)) : int64_t(v);
  }
  default: {
    int64_t v = 0;
    std::memcpy(&v, data, size < 8 ? size : 8);
    return v;
  }
  }
}

int64_t value_as_int(const ValueType &type, const uint8_t *data) {
  bool is_signed =
      type.kind == ValueType::Int || (type.kind == ValueType::Enum && type.enum_signed);
  return read_int(data, type.size, is_signed);
}

namespace {

std::string enum_name(const ValueType &type, int64_t v, const abi::ProgramSpec &spec) {
  auto e = spec.enums.find(type.enum_name);
  if (e == spec.enums.end())
    return "";
  auto n = e->second.find(v);
  return n == e->second.end() ? "" : n->second;
}

std::string symbol(uint64_t addr, const Symbolizer &symbolize) {
  if (symbolize)
    return symbolize(addr);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
  return buf;
}

// bpftrace's layout: a line per frame after a newline, so a map key reads "@[\n    main\n]";
// C++ frames demangled.
std::string user_stack(const ValueType &type, const uint8_t *data, const Symbolizer &symbolize) {
  std::string out = "\n";
  for (uint32_t off = 0; off + 8 <= type.size; off += 8) {
    uint64_t addr;
    std::memcpy(&addr, data + off, 8);
    if (addr == 0)
      break;
    out += "    " + demangle_symbol(symbol(addr, symbolize)) + "\n"; // as bpftrace's ustack
  }
  return out;
}

std::string probe_name(uint64_t index, const abi::ProgramSpec &spec) {
  return index < spec.probe_names.size() ? spec.probe_names[index] : std::to_string(index);
}

std::string number(const ValueType &type, const uint8_t *data) {
  int64_t v = value_as_int(type, data);
  bool is_signed =
      type.kind == ValueType::Int || (type.kind == ValueType::Enum && type.enum_signed);
  return is_signed ? std::to_string(v) : std::to_string(uint64_t(v));
}

std::string join(const std::vector<std::string> &parts, const char *sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); i++)
    out += (i ? sep : "") + parts[i];
  return out;
}

template <class F>
std::vector<std::string> map_elems(const ValueType &tuple, const uint8_t *data, F f) {
  std::vector<std::string> out;
  for (size_t i = 0; i < tuple.elems.size(); i++)
    out.push_back(f(tuple.elems[i], data + (i < tuple.offsets.size() ? tuple.offsets[i] : 0)));
  return out;
}

} // namespace

std::string format_value(const ValueType &type, const uint8_t *data, const abi::ProgramSpec &spec,
                         const Symbolizer &symbolize) {
  switch (type.kind) {
  case ValueType::None:
    return "";
  case ValueType::String: {
    auto p = reinterpret_cast<const char *>(data);
    return std::string(p, strnlen(p, type.size));
  }
  case ValueType::Tuple:
    return "(" +
           join(map_elems(type, data,
                          [&](const ValueType &t, const uint8_t *d) {
                            return format_value(t, d, spec, symbolize);
                          }),
                ", ") +
           ")";
  case ValueType::Enum: {
    std::string name = enum_name(type, value_as_int(type, data), spec);
    return name.empty() ? number(type, data) : name;
  }
  case ValueType::UserSym:
    return symbol(uint64_t(value_as_int(type, data)), symbolize);
  case ValueType::KernelName:
    return kernel_name(uint64_t(value_as_int(type, data)), symbolize);
  case ValueType::UStack:
    return user_stack(type, data, symbolize);
  case ValueType::Probe:
    return probe_name(uint64_t(value_as_int(type, data)), spec);
  case ValueType::Timestamp:
    if (!type.enum_name.empty())
      return format_strftime(type.enum_name, uint64_t(value_as_int(type, data)));
    return number(type, data);
  case ValueType::Int:
  case ValueType::UInt:
    return number(type, data);
  }
  return "";
}

std::string format_value_json(const ValueType &type, const uint8_t *data,
                              const abi::ProgramSpec &spec, const Symbolizer &symbolize) {
  auto quoted = [](const std::string &s) { return "\"" + json_escape(s) + "\""; };
  switch (type.kind) {
  case ValueType::Tuple:
    return "[" +
           join(map_elems(type, data,
                          [&](const ValueType &t, const uint8_t *d) {
                            return format_value_json(t, d, spec, symbolize);
                          }),
                ",") +
           "]";
  case ValueType::Enum: {
    std::string name = enum_name(type, value_as_int(type, data), spec);
    return name.empty() ? number(type, data) : quoted(name);
  }
  case ValueType::String:
  case ValueType::UserSym:
  case ValueType::KernelName:
  case ValueType::UStack:
  case ValueType::Probe:
    return quoted(format_value(type, data, spec, symbolize));
  default:
    return format_value(type, data, spec, symbolize);
  }
}

std::string format_key(const ValueType &key, const uint8_t *data, const abi::ProgramSpec &spec,
                       const Symbolizer &symbolize, OutputFormat format) {
  if (key.kind == ValueType::None)
    return "";
  // bpftrace 0.17 prints every 8-byte integer key as signed: @x[(uint64)-1] is "@x[-1]".
  auto text = [&](const ValueType &t, const uint8_t *d) {
    if (t.kind == ValueType::UInt && t.size == 8) {
      ValueType as_signed = t;
      as_signed.kind = ValueType::Int;
      return format_value(as_signed, d, spec, symbolize);
    }
    return format_value(t, d, spec, symbolize);
  };
  std::vector<std::string> args = key.kind == ValueType::Tuple
                                      ? map_elems(key, data, text)
                                      : std::vector<std::string>{text(key, data)};
  if (format == OutputFormat::Json)
    return "\"" + json_escape(join(args, ",")) + "\"";
  return "[" + join(args, ", ") + "]";
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    signed char c = static_cast<signed char>(ch);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c <= 0x1f) { // bpftrace's char is signed: bytes >= 0x80 land here too
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(int(c)));
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  return out;
}

} // namespace gpubt::runtime
