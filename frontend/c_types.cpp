// The fixed-width integer typedefs every script has (c_types.h): one table for clang's prelude
// and for the passes when the script has no C definitions for clang to read.
#include "frontend/c_types.h"

namespace gpubt::frontend {

const std::vector<PreludeTypedef> &prelude_typedefs() {
  static const std::vector<PreludeTypedef> kTypedefs = {
      {"int8_t", "signed char", 1, true},     {"uint8_t", "unsigned char", 1, false},
      {"int16_t", "short", 2, true},          {"uint16_t", "unsigned short", 2, false},
      {"int32_t", "int", 4, true},            {"uint32_t", "unsigned int", 4, false},
      {"int64_t", "long", 8, true},           {"uint64_t", "unsigned long", 8, false},
      {"size_t", "unsigned long", 8, false},  {"ssize_t", "long", 8, true},
      {"u8", "unsigned char", 1, false},      {"u16", "unsigned short", 2, false},
      {"u32", "unsigned int", 4, false},      {"u64", "unsigned long long", 8, false},
      {"s8", "signed char", 1, true},         {"s16", "short", 2, true},
      {"s32", "int", 4, true},                {"s64", "long long", 8, true},
  };
  return kTypedefs;
}

const Type *prelude_type(const std::string &name) {
  static const std::map<std::string, Type> kTypes = [] {
    std::map<std::string, Type> m;
    for (const auto &t : prelude_typedefs())
      m.emplace(t.name, Type::integer(t.size, t.is_signed));
    return m;
  }();
  auto it = kTypes.find(name);
  return it == kTypes.end() ? nullptr : &it->second;
}

} // namespace gpubt::frontend
