// printf() as bpftrace 0.17 runs it: FormatString::split() cuts the format after each
// conversion and each piece goes through snprintf with its one argument; the text after the
// last conversion is written as is (so "%%" there stays "%%"). We never hand the user's text
// to snprintf: literal text is copied (with "%%" -> "%" where snprintf would see it) and each
// conversion is rebuilt from its parsed fields.
#include "runtime/output/format_printf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/output/named_values.h"
#include "runtime/output/value.h"

namespace gpubt::runtime {

using abi::ValueType;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool one_of(const std::string &f, size_t j, const char *set) {
  return j < f.size() && std::strchr(set, f[j]) != nullptr;
}

// bpftrace's format_specifier_re, matched at f[i] == '%'.
bool match_at(const std::string &f, size_t i, PrintfConversion &c) {
  size_t j = i + 1;
  c = PrintfConversion{};
  c.begin = i;
  if (j < f.size() && f[j] == '-') {
    c.left = true;
    j++;
  }
  size_t w = j;
  while (j < f.size() && is_digit(f[j]))
    j++;
  c.width = f.substr(w, j - w);
  if (j + 1 < f.size() && f[j] == '.' && is_digit(f[j + 1])) {
    size_t p = ++j;
    while (j < f.size() && is_digit(f[j]))
      j++;
    c.precision = f.substr(p, j - p);
  }
  if (one_of(f, j, "g") && one_of(f, j + 1, "r")) { // %gr: GFP flags by name (bpftrace head)
    c.conv = 'g';
    c.end = j + 2;
    return true;
  }
  if (one_of(f, j, "csr")) {
    c.conv = f[j];
    c.end = j + 1;
    if (c.conv == 'r' && one_of(f, j + 1, "xh")) // %rx, %rh: buf() bytes all in hex
      c.length = f.substr(j + 1, 1), c.end++;
    return true;
  }
  static const char *const lengths[] = {"hh", "h", "ll", "l", "j", "z", "t", ""};
  for (const char *len : lengths) {
    size_t n = std::strlen(len);
    if (f.compare(j, n, len) == 0 && one_of(f, j + n, "duoxXp")) {
      c.length = len;
      c.conv = f[j + n];
      c.end = j + n + 1;
      return true;
    }
  }
  return false;
}

// Literal text before a conversion: snprintf would turn "%%" into "%". Any other '%' here
// starts a sequence bpftrace does not count as a conversion (undefined behaviour in
// bpftrace); we print it as written.
void append_literal(std::string &out, const std::string &f, size_t begin, size_t end) {
  for (size_t i = begin; i < end; i++) {
    out += f[i];
    if (f[i] == '%' && i + 1 < end && f[i + 1] == '%')
      i++;
  }
}

template <class T> void append_snprintf(std::string &out, const std::string &spec, T value) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n <= 0)
    return;
  std::string buf(size_t(n) + 1, '\0');
  std::snprintf(buf.data(), buf.size(), spec.c_str(), value);
  out.append(buf.data(), size_t(n));
}

int64_t int_arg(const ValueType &t, const uint8_t *data) {
  switch (t.kind) {
  case ValueType::None:
  case ValueType::String:
  case ValueType::Tuple:
  case ValueType::Record:
  case ValueType::NamedTuple:
  case ValueType::Array:
    return 0;
  default:
    return value_as_int(t, data);
  }
}

// bpftrace passes every integer as a 64-bit vararg: %d reads its low 32 bits, %ld all 64.
void append_conversion(Message &msg, const PrintfConversion &c, const ValueType &t,
                       const uint8_t *data, const abi::ProgramSpec &spec,
                       const Symbolizer &symbolize) {
  std::string &out = msg.pieces.back().text;
  std::string s = "%";
  if (c.left)
    s += '-';
  s += c.width;
  if (!c.precision.empty())
    s += "." + c.precision;
  int64_t v = int_arg(t, data);
  if (c.conv == 'r' && t.kind == ValueType::Buffer && !c.length.empty()) {
    std::string_view bytes = buffer_bytes(t, data);
    std::string text =
        buffer_text(bytes, c.length == "x" ? BufferStyle::Escaped : BufferStyle::Hex);
    return append_snprintf(out, s + 's', text.c_str());
  }
  switch (c.conv) {
  case 's':
  case 'r': {
    // What %s prints may come from the traced program (strings, and names: symbols, kernel
    // names, stacks, Python file names), so its lines are traced text; the newlines between
    // them are not (a stack prints on its lines).
    std::string text;
    append_snprintf(text, s + 's', value_text(make_value(t, data, spec, symbolize)).c_str());
    for (size_t at = 0;;) {
      size_t nl = text.find('\n', at);
      msg.pieces.push_back({text.substr(at, nl == std::string::npos ? nl : nl - at), true});
      if (nl == std::string::npos)
        break;
      msg.pieces.push_back({"\n", false});
      at = nl + 1;
    }
    msg.pieces.push_back({});
    return;
  }
  case 'g':
    return append_snprintf(out, s + 's', gfp_flags_text(uint64_t(v)).c_str());
  case 'c':
    return append_snprintf(out, s + 'c', int(v));
  case 'p':
    return append_snprintf(out, s + 'p', reinterpret_cast<void *>(uintptr_t(v)));
  }
  bool is_signed = c.conv == 'd';
  if (c.length.empty() || c.length[0] == 'h') {
    s += c.length + c.conv;
    if (is_signed)
      return append_snprintf(out, s, int(v));
    return append_snprintf(out, s, unsigned(v));
  }
  s += std::string("ll") + c.conv;
  if (is_signed)
    return append_snprintf(out, s, (long long)v);
  append_snprintf(out, s, (unsigned long long)v);
}

} // namespace

std::vector<PrintfConversion> printf_conversions(const std::string &format) {
  std::vector<PrintfConversion> out;
  PrintfConversion c;
  for (size_t i = 0; i < format.size(); i++) {
    if (format[i] == '%' && match_at(format, i, c)) {
      out.push_back(c);
      i = c.end - 1;
    }
  }
  return out;
}

Message format_printf(const abi::FormatSpec &format, const uint8_t *payload, size_t size,
                      const abi::ProgramSpec &spec, const Symbolizer &symbolize) {
  const std::string &f = format.format;
  std::vector<PrintfConversion> convs = printf_conversions(f);
  Message msg;
  msg.pieces.push_back({});
  size_t pos = 0, i = 0;
  for (; i < format.args.size() && i < convs.size(); i++) {
    const abi::FormatArg &arg = format.args[i];
    // An arg cut short by the event's size reads as zeros rather than past the buffer.
    std::vector<uint8_t> bytes(arg.type.size + 8, 0);
    if (arg.offset < size)
      std::memcpy(bytes.data(), payload + arg.offset,
                  std::min<size_t>(arg.type.size, size - arg.offset));
    append_literal(msg.pieces.back().text, f, pos, convs[i].begin);
    append_conversion(msg, convs[i], arg.type, bytes.data(), spec, symbolize);
    pos = convs[i].end;
  }
  // bpftrace writes the next piece raw: the tail, or (with too few args) up to and including
  // the next conversion.
  size_t end = i < convs.size() ? convs[i].end : f.size();
  msg.pieces.back().text.append(f, pos, end - pos);
  return msg;
}

} // namespace gpubt::runtime
