// Decodes one typed value as bpftrace 0.17 reads it (Output::value_to_str and friends).
#include "runtime/output/value.h"

#include "runtime/output/named_values.h"
#include "runtime/output/strftime_format.h"
#include "runtime/process/demangle.h"
#include "runtime/process/kernel_symbols.h"
#include "runtime/process/python_frames.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

std::string_view buffer_bytes(const abi::ValueType &type, const uint8_t *data) {
  if (type.size == 0)
    return {};
  size_t n = std::min<size_t>(data[0], type.size - 1);
  return {reinterpret_cast<const char *>(data + 1), n};
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

// A stack's text (see make_value's stack cases).
std::string stack_text(const std::vector<std::string> &lines) {
  std::string out = "\n";
  for (const auto &line : lines)
    out += "    " + line + "\n";
  return out;
}

// The names of the return addresses (0-padded) in TYPE's bytes: NAME_OF names one.
template <class NameOf>
std::vector<std::string> stack_names(const ValueType &type, const uint8_t *data, NameOf name_of) {
  std::vector<std::string> out;
  for (uint32_t off = 0; off + 8 <= type.size; off += 8) {
    uint64_t addr;
    std::memcpy(&addr, data + off, 8);
    if (addr == 0)
      break;
    out.push_back(name_of(addr));
  }
  return out;
}

std::vector<std::string> user_stack_names(const ValueType &type, const uint8_t *data,
                                          const Symbolizer &symbolize) {
  return stack_names(type, data, [&](uint64_t a) {
    return demangle_symbol(symbol(a, symbolize)); // C++ frames demangled
  });
}

// pystack's frames (runtime/process/python_frames.h), by eval loop call.
std::vector<std::vector<std::string>> python_groups(const ValueType &type, const uint8_t *data) {
  abi::PyStackHeader header;
  std::memcpy(&header, data, sizeof header);
  std::vector<abi::PyStackFrame> frames((type.size - sizeof header) / sizeof(abi::PyStackFrame));
  std::memcpy(frames.data(), data + sizeof header, frames.size() * sizeof(abi::PyStackFrame));
  return python_frame_groups(header, frames);
}

std::vector<std::string> flatten(const std::vector<std::vector<std::string>> &groups) {
  std::vector<std::string> out;
  for (const auto &g : groups)
    out.insert(out.end(), g.begin(), g.end());
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

Value named(std::string text) { return Value::of(Value::Kind::Name, std::move(text)); }

} // namespace

Value make_value(const ValueType &type, const uint8_t *data, const abi::ProgramSpec &spec,
                 const Symbolizer &symbolize) {
  switch (type.kind) {
  case ValueType::None:
    return Value::number("");
  case ValueType::String: {
    auto p = reinterpret_cast<const char *>(data);
    return Value::of(Value::Kind::String, std::string(p, strnlen(p, type.size)));
  }
  case ValueType::Tuple:
  case ValueType::Record:
  case ValueType::NamedTuple: {
    Value v = Value::of(type.kind == ValueType::Tuple        ? Value::Kind::Tuple
                        : type.kind == ValueType::NamedTuple ? Value::Kind::NamedTuple
                                                             : Value::Kind::Record);
    v.names = type.names;
    for (size_t i = 0; i < type.elems.size(); i++)
      v.elems.push_back(make_value(
          type.elems[i], data + (i < type.offsets.size() ? type.offsets[i] : 0), spec, symbolize));
    return v;
  }
  case ValueType::Array: {
    Value v = Value::of(Value::Kind::Array);
    uint32_t step = type.elems.empty() ? 0 : type.elems[0].size;
    for (uint32_t off = 0; step && off + step <= type.size; off += step)
      v.elems.push_back(make_value(type.elems[0], data + off, spec, symbolize));
    return v;
  }
  case ValueType::Enum: {
    std::string name = enum_name(type, value_as_int(type, data), spec);
    return name.empty() ? Value::number(number(type, data)) : named(name);
  }
  case ValueType::UserSym:
    return named(symbol(uint64_t(value_as_int(type, data)), symbolize));
  case ValueType::KernelName:
    return named(kernel_name(uint64_t(value_as_int(type, data)), symbolize));
  // bpftrace's layout of stacks: a line per frame (innermost first) after a newline, so a map
  // key reads "@[\n    main\n]"; pystack's lines are `file:line function`.
  case ValueType::UStack:
    return named(stack_text(user_stack_names(type, data, symbolize)));
  case ValueType::KStack:
    return named(stack_text(stack_names(type, data, kernel_symbol_at)));
  case ValueType::PyStack:
    return named(stack_text(flatten(python_groups(type, data))));
  case ValueType::UstackPy:
    return named(stack_text(splice_python_frames(
        user_stack_names(type.elems[1], data + type.offsets[1], symbolize),
        python_groups(type.elems[0], data))));
  case ValueType::Probe:
    return named(probe_name(uint64_t(value_as_int(type, data)), spec));
  case ValueType::Timestamp: // strftime(): its format rides in the type
    if (!type.enum_name.empty())
      return named(format_strftime(type.enum_name, uint64_t(value_as_int(type, data))));
    return Value::number(number(type, data));
  case ValueType::Int:
  case ValueType::UInt: {
    Value v = Value::number(number(type, data));
    v.pointer = type.pointer;
    return v;
  }
  case ValueType::Bool: // a number, so that JSON has true and false
    return Value::number(value_as_int(type, data) ? "true" : "false");
  case ValueType::Buffer:
    return named(buffer_text(buffer_bytes(type, data)));
  case ValueType::Inet: {
    uint64_t family;
    std::memcpy(&family, data, 8);
    return named(inet_text(family, data + 8));
  }
  case ValueType::MacAddr:
    return named(mac_text(data));
  case ValueType::Errno:
    return named(errno_text(value_as_int(type, data)));
  case ValueType::SignalName:
    return named(signal_text(value_as_int(type, data)));
  case ValueType::Username:
    return named(user_name(uint64_t(value_as_int(type, data))));
  case ValueType::CgroupPath:
    return named(cgroup_paths(uint64_t(value_as_int(type, data))));
  }
  return Value::number("");
}

std::vector<Value> make_key(const ValueType &key, const uint8_t *data, const abi::ProgramSpec &spec,
                            const Symbolizer &symbolize, bool uint64_as_signed) {
  auto arg = [&](const ValueType &t, const uint8_t *d) {
    if (t.kind == ValueType::UInt && t.size == 8 && uint64_as_signed) {
      ValueType as_signed = t;
      as_signed.kind = ValueType::Int;
      return make_value(as_signed, d, spec, symbolize);
    }
    return make_value(t, d, spec, symbolize);
  };
  std::vector<Value> out;
  if (key.kind == ValueType::Tuple) {
    for (size_t i = 0; i < key.elems.size(); i++)
      out.push_back(arg(key.elems[i], data + (i < key.offsets.size() ? key.offsets[i] : 0)));
  } else if (key.kind != ValueType::None) {
    out.push_back(arg(key, data));
  }
  return out;
}

namespace {

// ESCAPE applied to each line of TEXT; the newlines stay (a stack's lines).
std::string escape_lines(const std::string &text, std::string (*escape)(std::string_view)) {
  std::string out;
  for (size_t at = 0;;) {
    size_t nl = text.find('\n', at);
    out += escape(std::string_view(text).substr(at, nl == std::string::npos ? nl : nl - at));
    if (nl == std::string::npos)
      return out;
    out += '\n';
    at = nl + 1;
  }
}

} // namespace

std::string value_text(const Value &v, std::string (*escape)(std::string_view), bool compact,
                       bool hex_pointers) {
  switch (v.kind) {
  case Value::Kind::String:
    return escape ? escape(v.text) : v.text;
  case Value::Kind::Name: // symbol, kernel and file names come from the traced program too
    return escape ? escape_lines(v.text, escape) : v.text;
  case Value::Kind::Tuple: {
    std::string out = "(";
    for (size_t i = 0; i < v.elems.size(); i++)
      out += (i ? ", " : "") + value_text(v.elems[i], escape, compact, hex_pointers);
    return out + ")";
  }
  case Value::Kind::Record:
  case Value::Kind::NamedTuple: {
    compact = compact && v.kind == Value::Kind::Record; // bpftrace head spaces its records
    std::string out = compact ? "{" : "{ ";
    for (size_t i = 0; i < v.elems.size(); i++) {
      out += i ? (compact ? "," : ", ") : "";
      out += "." + (i < v.names.size() ? v.names[i] : "") + (compact ? "=" : " = ");
      out += value_text(v.elems[i], escape, compact, hex_pointers);
    }
    return out + (compact ? "}" : " }");
  }
  case Value::Kind::Array: {
    std::string out = "[";
    for (size_t i = 0; i < v.elems.size(); i++)
      out += (i ? "," : "") + value_text(v.elems[i], escape, compact, hex_pointers);
    return out + "]";
  }
  default:
    if (v.pointer && hex_pointers && !v.text.empty()) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", std::strtoull(v.text.c_str(), nullptr, 10));
      return hex;
    }
    return v.text;
  }
}

} // namespace gpubt::runtime
