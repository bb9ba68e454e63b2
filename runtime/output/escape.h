// Traced bytes made safe for each output: any byte string becomes valid JSON, and text output
// shows control characters as escapes instead of handing them to the terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace gpubt::runtime {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF); 0 when the byte there starts none.
size_t utf8_sequence_length(std::string_view s, size_t i);

// The body of a JSON string: quote, backslash, \n \r \t and other bytes below 0x20 escaped as
// bpftrace 0.17 does; well-formed UTF-8 as is; any other byte 0xNN as \u00NN (the character
// Latin-1 gives that byte). bpftrace 0.17 writes bytes >= 0x80 as "\uffffffc3", which no JSON
// parser accepts.
std::string json_escape(std::string_view s);

// For text output: C0 controls and DEL as \n, \t, \r or \xNN, C1 controls (U+0080-U+009F) and
// bytes that are not well-formed UTF-8 as \xNN per byte; everything else (backslash included)
// as is.
std::string escape_control(std::string_view s);

} // namespace gpubt::runtime
