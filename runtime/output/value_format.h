// Renders one typed value (a map key, a map value, a printf or print() argument) the way
// bpftrace 0.17 prints it, in text and in -f json.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/abi/program_spec.h"
#include "runtime/abi/map_data.h"

namespace gpubt::runtime {

// Reads an integer of `size` bytes (1, 2, 4 or 8), sign-extending when is_signed.
int64_t read_int(const uint8_t *data, uint32_t size, bool is_signed);

// The value as a 64-bit integer: Int and signed Enums sign-extend, the rest zero-extend.
int64_t value_as_int(const abi::ValueType &type, const uint8_t *data);

// Text: strings up to their NUL, tuples "(1, abc)", enums and probes by name, symbols resolved.
std::string format_value(const abi::ValueType &type, const uint8_t *data,
                         const abi::ProgramSpec &spec, const Symbolizer &symbolize);

// JSON: strings, symbols, probes and enum names quoted; tuples "[1,\"abc\"]".
std::string format_value_json(const abi::ValueType &type, const uint8_t *data,
                              const abi::ProgramSpec &spec, const Symbolizer &symbolize);

// A map key: text "[1, abc]" (a Tuple key is the key list), JSON "\"1,abc\""; "" for None.
std::string format_key(const abi::ValueType &key, const uint8_t *data, const abi::ProgramSpec &spec,
                       const Symbolizer &symbolize, OutputFormat format);

// bpftrace's escaping: quote, backslash, \n \r \t, other bytes <= 0x1f and (a char being
// signed) every byte >= 0x80 as \uXXXX of the sign-extended value ("\uffffffc3").
std::string json_escape(std::string_view s);

} // namespace gpubt::runtime
