// Literal decoding; the lexer has already checked the overall shape of the token.
#include "frontend/parse/literals.h"

namespace gpubt::frontend::parse {

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

IntLiteral decode_int(std::string_view text) {
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
