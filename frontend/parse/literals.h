// Decoding of integer and string literals with bpftrace 0.17's rules (1_000, 1e3, 0x10, 010;
// \n \t \r \\ \" \xHH \NNN), and newer bpftrace's suffixes (1ms, 5s,
// 10UL). Pure functions so the parser and its tests share them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpubt::frontend::parse {

struct IntLiteral {
  std::optional<int64_t> value; // values above INT64_MAX wrap, as bpftrace
  std::string error;            // set when value is empty
};
IntLiteral decode_int(std::string_view text);

struct StringLiteral {
  std::string value;
  std::string error;    // "invalid escape character '\q'"
  size_t error_end = 0; // offset in the token just past the bad escape
};
// text includes the surrounding quotes.
StringLiteral decode_string(std::string_view text);

} // namespace gpubt::frontend::parse
