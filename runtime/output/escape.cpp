// UTF-8 per RFC 3629 table 3-7 of Unicode (well-formed byte sequences).
#include "runtime/output/escape.h"

#include <cstdio>

namespace gpubt::runtime {

namespace {

void append_hex(std::string &out, const char *format, unsigned char byte) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, unsigned(byte));
  out += buf;
}

} // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80)
    return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf; // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    lo = c == 0xe0 ? 0xa0 : 0x80; // no overlong forms
    hi = c == 0xed ? 0x9f : 0xbf; // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    lo = c == 0xf0 ? 0x90 : 0x80;
    hi = c == 0xf4 ? 0x8f : 0xbf; // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi)
    return 0;
  for (size_t k = 2; k < n; k++)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf)
      return 0;
  return n;
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_sequence_length(s, i);
    if (n > 1) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    i++;
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
      if (c < 0x20 || c >= 0x80)
        append_hex(out, "\\u%04x", c);
      else
        out += char(c);
    }
  }
  return out;
}

std::string escape_control(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_sequence_length(s, i);
    bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
    if (n > 1 && !c1) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    for (size_t k = 0; k < (c1 ? 2 : 1); k++, i++) {
      unsigned char b = static_cast<unsigned char>(s[i]);
      if (b == '\n')
        out += "\\n";
      else if (b == '\t')
        out += "\\t";
      else if (b == '\r')
        out += "\\r";
      else if (b < 0x20 || b >= 0x7f)
        append_hex(out, "\\x%02x", b);
      else
        out += char(b);
    }
  }
  return out;
}

} // namespace gpubt::runtime
