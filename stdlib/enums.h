// Named integer enums of the GPU APIs (cudaError_t, CUresult, hipError_t, cudaMemcpyKind, ...):
// value -> name for printing, name -> value for constants in scripts. Data generated from the
// vendor headers by scripts/gen-api-enums.py into enums_data.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpubt::stdlib {

struct EnumConstant {
  std::string_view name;
  int64_t value;
};

struct EnumDef {
  std::string_view name;  // as scripts and frontend::Type::enum_name spell it: "cudaError_t"
  std::string_view c_tag; // the C enum tag in the header: "cudaError"
  uint32_t size;          // bytes (all are C enums: 4)
  bool is_signed;         // any negative enumerator
  std::span<const EnumConstant> constants; // declaration order, aliases included
};

// Every catalogued enum (generated table).
std::span<const EnumDef> enum_defs();

const EnumDef *find_enum_def(std::string_view enum_name);

// value -> name; where two names share a value the first declared wins (HIP declares the
// current name before its deprecated alias). This is the shape ProgramSpec::enums stores.
using EnumTable = std::map<int64_t, std::string>;
const EnumTable *find_enum(std::string_view enum_name);

// Names of all catalogued enums, sorted.
std::vector<std::string_view> enum_names();

// The name of `value`, or nullopt if it has none.
std::optional<std::string_view> enum_value_name(std::string_view enum_name, int64_t value);

// The constants of every catalogued enum (cudaSuccess, ncclFloat32, ...), for did-you-mean.
std::vector<std::string> enum_constant_names();

// A constant by its name in any catalogued enum, e.g. "cudaMemcpyHostToDevice".
struct EnumConstantRef {
  const EnumDef *def;
  int64_t value;
};
std::optional<EnumConstantRef> find_enum_constant(std::string_view constant_name);

} // namespace gpubt::stdlib
