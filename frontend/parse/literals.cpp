// Literal decoding; the lexer has already checked the overall shape of the token.
#include "frontend/parse/literals.h"

#include <cctype>

namespace gpubt::frontend::parse {

static IntLiteral decode_plain_int(std::string_view text);

static bool mul_add(uint64_t &acc, uint64_t base, uint64_t digit) {
  return !__builtin_mul_overflow(acc, base, &acc) && !__builtin_add_overflow(acc, digit, &acc);
}

static int digit_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 99;
}

// Newer bpftrace's suffixes: a duration (1ms is 1000000, in nanoseconds), or C's U/L/LL, which
// change nothing. Returns the multiplier and cuts the suffix off TEXT.
static uint64_t cut_suffix(std::string_view &text) {
  bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  while (!text.empty() && std::string_view("uUlL").find(text.back()) != std::string_view::npos)
    text.remove_suffix(1);
  if (hex)
    return 1;
  static const struct {
    std::string_view suffix;
    uint64_t ns;
  } kDurations[] = {{"ns", 1},          {"us", 1000},           {"ms", 1000000},
                    {"s", 1000000000}, {"m", 60000000000},     {"h", 3600000000000},
                    {"d", 86400000000000}};
  for (const auto &d : kDurations)
    if (text.size() > d.suffix.size() && text.ends_with(d.suffix) &&
        (d.suffix.size() == 2 || !std::isalpha(static_cast<unsigned char>(text[text.size() - 2])))) {
      text.remove_suffix(d.suffix.size());
      return d.ns;
    }
  return 1;
}

IntLiteral decode_int(std::string_view text) {
  const std::string_view written = text;
  uint64_t unit = cut_suffix(text);
  IntLiteral out = decode_plain_int(text);
  if (out.value && unit != 1 && __builtin_mul_overflow(uint64_t(*out.value), unit, &unit)) {
    out.value.reset();
    out.error = "integer " + std::string(written) + " is out of range";
  } else if (out.value && unit != 1) {
    out.value = int64_t(unit);
  }
  return out;
}

static IntLiteral decode_plain_int(std::string_view text) {
  std::string_view digits = text, exponent;
  uint64_t base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    digits = text.substr(2);
  } else {
    size_t e = text.find_first_of("eE");
    if (e != std::string_view::npos) {
      digits = text.substr(0, e);
      exponent = text.substr(e + 1);
    }
    if (digits.size() > 1 && digits[0] == '0')
      base = 8;
  }
  IntLiteral out;
  uint64_t v = 0;
  for (char c : digits) {
    if (c == '_')
      continue;
    if (uint64_t(digit_value(c)) >= base) {
      out.error = "Found trailing non-numeric characters";
      return out;
    }
    if (!mul_add(v, base, digit_value(c))) {
      out.error = "integer " + std::string(text) + " is out of range";
      return out;
    }
  }
  uint64_t exp = 0;
  for (char c : exponent)
    if (!mul_add(exp, 10, c - '0') || exp > 64)
      break;
  for (uint64_t i = 0; i < exp; ++i)
    if (!mul_add(v, 10, 0)) {
      out.error = "integer " + std::string(text) + " is out of range";
      return out;
    }
  out.value = int64_t(v);
  return out;
}

static const struct {
  char letter, value;
} kSimpleEscapes[] = {{'n', '\n'}, {'t', '\t'}, {'r', '\r'}, {'\\', '\\'}, {'"', '"'}};

StringLiteral decode_string(std::string_view text) {
  StringLiteral out;
  std::string_view body = text.substr(1, text.size() >= 2 ? text.size() - 2 : 0);
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out.value += c;
      continue;
    }
    char e = body[++i];
    bool done = false;
    for (auto s : kSimpleEscapes)
      if (s.letter == e) {
        out.value += s.value;
        done = true;
      }
    if (done)
      continue;
    if (e >= '0' && e <= '7') {
      unsigned v = 0;
      size_t n = 0;
      for (; n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++n, ++i)
        v = v * 8 + (body[i] - '0');
      --i;
      out.value += char(v & 0xff);
      continue;
    }
    if (e == 'x' && i + 1 < body.size() && digit_value(body[i + 1]) < 16) {
      unsigned v = 0;
      for (size_t n = 0; n < 2 && i + 1 < body.size() && digit_value(body[i + 1]) < 16; ++n)
        v = v * 16 + digit_value(body[++i]);
      out.value += char(v);
      continue;
    }
    out.error = std::string("invalid escape character '\\") + e + "'";
    out.error_end = 1 + i + 1; // opening quote + through the escape letter
    return out;
  }
  return out;
}

} // namespace gpubt::frontend::parse
