// A value as every output format sees it: decoded once from a map, a print() or a printf()
// argument (the typed bytes and their spec), then laid out by each Output.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/output/hist_buckets.h"
#include "runtime/output/tseries_rows.h"

namespace gpubt::runtime {

struct Value {
  enum class Kind {
    Number, // text: the decimal digits ("" for a value missing from its map entry)
    String, // text: bytes that came from the traced program (str(), comm), up to the NUL
    Name,   // text: made by gpubt (a symbol, a stack, a probe or enum name), of names that may
            // come from the traced program (its symbols, kernels, Python files): escaped too
    Tuple,  // elems
    Record, // elems, named by names (a C struct or union)
    NamedTuple, // elems, named by names: bpftrace's record (a = 1), spaced in map keys too
    Array,  // elems
    Stats,  // count, average, total
    Hist,   // hist: hist() and lhist() buckets, trimmed to the non-empty range
    TimeSeries, // series: a tseries() map's intervals
  };
  Kind kind = Kind::Number;
  std::string text;
  bool pointer = false; // Number: an address (bpftrace head prints it in hex)
  std::vector<Value> elems;
  std::vector<std::string> names; // Record, NamedTuple
  int64_t count = 0, average = 0, total = 0;
  HistBuckets hist;
  TimeSeries series;

  static Value of(Kind kind, std::string text = "") {
    Value v;
    v.kind = kind;
    v.text = std::move(text);
    return v;
  }
  static Value number(std::string digits) { return of(Kind::Number, std::move(digits)); }
};

// Reads an integer of `size` bytes (1, 2, 4 or 8), sign-extending when is_signed.
int64_t read_int(const uint8_t *data, uint32_t size, bool is_signed);

// A buf() value's data: its length byte says how many of the bytes after it.
std::string_view buffer_bytes(const abi::ValueType &type, const uint8_t *data);

// The value as a 64-bit integer: Int and signed Enums sign-extend, the rest zero-extend.
int64_t value_as_int(const abi::ValueType &type, const uint8_t *data);

// Decodes the typed bytes: strings to their NUL, enums and probes by name, symbols resolved,
// C++ frames of a stack demangled.
Value make_value(const abi::ValueType &type, const uint8_t *data, const abi::ProgramSpec &spec,
                 const Symbolizer &symbolize);

// A map key, one Value per key argument (none for a scalar map). bpftrace 0.17 prints every
// 8-byte integer key as signed: @x[(uint64)-1] is "@x[-1]"; its head, UINT64_AS_SIGNED false,
// as its type says.
std::vector<Value> make_key(const abi::ValueType &key, const uint8_t *data,
                            const abi::ProgramSpec &spec, const Symbolizer &symbolize,
                            bool uint64_as_signed = true);

// bpftrace's text rendering of a value, as printf("%s") and text output show it: tuples
// "(1, abc)", records "{ .a = 1, .b = 2 }" (C structs in map keys, COMPACT: "{.a=1,.b=2}"), arrays
// "[1,2]", stats "count 1, average 2, total 2". ESCAPE is applied to String values.
// HEX_POINTERS: addresses as bpftrace head prints them, "0xffff8881..." (0.17: decimal).
std::string value_text(const Value &v, std::string (*escape)(std::string_view) = nullptr,
                       bool compact = false, bool hex_pointers = false);

} // namespace gpubt::runtime
