// Field layout of a tracepoint's record, from tracefs events/CATEGORY/EVENT/format, for
// args.NAME reads in tracepoint programs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/types.h"

namespace gpubt::codegen::bpf {

struct TracepointField {
  uint32_t offset = 0, size = 0;
  bool is_signed = false;
  bool data_loc = false;   // __data_loc: a u32 (length << 16 | offset) pointing into the record
  bool char_array = false; // char name[N]: read as a string
  std::string record;      // "struct X" when the field is a `struct X *` (typed through BTF)
};

// CATEGORY and EVENT may be wildcards: the first matching tracepoint's layout is used.
std::optional<TracepointField> read_tracepoint_field(const std::string &category,
                                                     const std::string &event,
                                                     const std::string &field);

// The script type of a field: strings for char arrays and __data_loc strings (64 bytes, as
// bpftrace), a pointer to the record for `struct X *` fields (its definition is BTF's), else an
// integer of the field's size (other pointers are uint64).
frontend::Type tracepoint_field_type(const TracepointField &f);

// A frontend::FieldResolver for SemanticOptions::field_type: args.NAME of tracepoints.
std::optional<frontend::Type> tracepoint_arg_type(const frontend::AttachPoint &ap,
                                                  std::string_view field);

// A frontend::FieldErrorFn for tracepoints: bpftrace's "Struct/union of type 'struct
// _tracepoint_CATEGORY_EVENT' does not contain a field named 'NAME'", with a did-you-mean when a
// field is near; empty when the field is there or the format cannot be read.
std::string tracepoint_arg_error(const frontend::AttachPoint &ap, std::string_view field);

} // namespace gpubt::codegen::bpf
