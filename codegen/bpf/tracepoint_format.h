// Field layout of a tracepoint's record, from tracefs events/CATEGORY/EVENT/format, for
// args.NAME reads in tracepoint programs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gpubt::codegen::bpf {

struct TracepointField {
  uint32_t offset = 0, size = 0;
  bool is_signed = false;
  bool data_loc = false;   // __data_loc: a u32 (length << 16 | offset) pointing into the record
  bool char_array = false; // char name[N]: read as a string
};

std::optional<TracepointField> read_tracepoint_field(const std::string &category,
                                                     const std::string &event,
                                                     const std::string &field);

} // namespace gpubt::codegen::bpf
