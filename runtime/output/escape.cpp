// Well-formed UTF-8 as RFC 3629 and Unicode 15 table 3-7 define it; both escapes walk it the
// same way and differ only in what they keep and how they write a byte.
#include "runtime/output/escape.h"

#include <cstdio>

namespace gpubt::runtime {

namespace {

void append_hex(std::string &out, const char *format, unsigned char byte) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, unsigned(byte));
  out += buf;
}

const char *named_escape(unsigned char c) {
  switch (c) {
  case '\n':
    return "\\n";
  case '\r':
    return "\\r";
  case '\t':
    return "\\t";
  }
  return nullptr;
}

// Copies the well-formed UTF-8 sequences of S that KEEP accepts; every other byte (a sequence
// not kept, byte by byte) goes through ESCAPE(out, byte).
template <class Keep, class Escape>
std::string escape_bytes(std::string_view s, Keep keep, Escape escape) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n > 1 && keep(s.substr(i, n))) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    for (size_t end = i + (n ? n : 1); i < end; i++)
      escape(out, static_cast<unsigned char>(s[i]));
  }
  return out;
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
  return escape_bytes(
      s, [](std::string_view) { return true; },
      [](std::string &out, unsigned char c) {
        if (c == '"' || c == '\\')
          out += {'\\', char(c)};
        else if (const char *named = named_escape(c))
          out += named;
        else if (c < 0x20 || c >= 0x80)
          append_hex(out, "\\u%04x", c);
        else
          out += char(c);
      });
}

std::string escape_control(std::string_view s) {
  auto not_c1 = [](std::string_view seq) {
    return !(seq.size() == 2 && static_cast<unsigned char>(seq[0]) == 0xc2 &&
             static_cast<unsigned char>(seq[1]) < 0xa0);
  };
  return escape_bytes(s, not_c1, [](std::string &out, unsigned char c) {
    if (const char *named = named_escape(c))
      out += named;
    else if (c < 0x20 || c >= 0x7f)
      append_hex(out, "\\x%02x", c);
    else
      out += char(c);
  });
}

} // namespace gpubt::runtime
