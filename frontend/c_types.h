// What the C definitions of a script declare (struct, union and enum types, typedefs, integer
// macros and enum constants), read by clang (frontend/clang) and used by the semantic passes.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/types.h"

namespace gpubt::frontend {

// The fixed-width integer typedefs a script has without any #include, as bpftrace's own headers
// give them (uint64_t, size_t, u32, s64, ...): NAME is C's C_TYPE.
struct PreludeTypedef {
  const char *name, *c_type;
  uint32_t size;
  bool is_signed;
};
const std::vector<PreludeTypedef> &prelude_typedefs();
// The integer type of a prelude typedef; null for another name.
const Type *prelude_type(const std::string &name);

struct CTypes {
  std::map<std::string, Type> types;        // "struct Foo", "union U", typedef names
  std::map<std::string, int64_t> constants; // enum constants and `#define NAME <integer>`
  // Named enums ("enum Foo"): each value's name, and which enum defines a constant.
  std::map<std::string, std::map<int64_t, std::string>> enums;
  std::map<std::string, std::string> constant_enums;

  // A C type by name ("struct Foo", a typedef, a prelude typedef the script has even without
  // C definitions for clang to read); null if none.
  const Type *find(const std::string &name) const {
    auto it = types.find(name);
    return it == types.end() ? prelude_type(name) : &it->second;
  }
  // offsetof(T, a.b): the byte offset of the field PATH in the record T; none where a step is
  // not a field of a record.
  std::optional<uint64_t> offset_of(const Type &t, const std::vector<std::string> &path) const {
    Type rec = complete(t);
    uint64_t offset = 0;
    for (const auto &field : path) {
      int i = rec.kind == TypeKind::Record ? field_index(rec, field) : -1;
      if (i < 0)
        return std::nullopt;
      offset += rec.offsets[size_t(i)];
      rec = complete(rec.elems[size_t(i)]);
    }
    return offset;
  }
  // A record behind a pointer may be a stub (see Type::is_record_stub): its definition.
  Type complete(const Type &t) const {
    if (!t.is_record_stub())
      return t;
    const Type *full = find(t.enum_name);
    return full ? *full : t;
  }
};

} // namespace gpubt::frontend
