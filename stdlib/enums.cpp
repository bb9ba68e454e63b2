// Lookups over the generated enum tables; the maps are built once, on first use.
#include "stdlib/enums.h"

#include <algorithm>
#include <unordered_map>

namespace gpubt::stdlib {
namespace {

struct Index {
  std::map<std::string_view, EnumTable> tables;
  std::unordered_map<std::string_view, EnumConstantRef> constants;
};

const Index &index() {
  static const Index idx = [] {
    Index i;
    for (const EnumDef &def : enum_defs()) {
      EnumTable &t = i.tables[def.name];
      for (const EnumConstant &c : def.constants) {
        t.emplace(c.value, std::string(c.name)); // emplace keeps the first name for a value
        i.constants.emplace(c.name, EnumConstantRef{&def, c.value});
      }
    }
    return i;
  }();
  return idx;
}

} // namespace

const EnumDef *find_enum_def(std::string_view enum_name) {
  auto defs = enum_defs();
  auto it =
      std::find_if(defs.begin(), defs.end(), [&](const EnumDef &d) { return d.name == enum_name; });
  return it == defs.end() ? nullptr : &*it;
}

const EnumTable *find_enum(std::string_view enum_name) {
  auto &tables = index().tables;
  auto it = tables.find(enum_name);
  return it == tables.end() ? nullptr : &it->second;
}

std::vector<std::string_view> enum_names() {
  std::vector<std::string_view> names;
  for (auto &[name, table] : index().tables)
    names.push_back(name);
  return names;
}

std::optional<std::string_view> enum_value_name(std::string_view enum_name, int64_t value) {
  const EnumTable *t = find_enum(enum_name);
  if (!t)
    return std::nullopt;
  auto it = t->find(value);
  if (it == t->end())
    return std::nullopt;
  return std::string_view(it->second);
}

std::vector<std::string> enum_constant_names() {
  std::vector<std::string> names;
  for (const auto &def : enum_defs())
    for (const auto &c : def.constants)
      names.emplace_back(c.name);
  return names;
}

std::optional<EnumConstantRef> find_enum_constant(std::string_view constant_name) {
  auto &constants = index().constants;
  auto it = constants.find(constant_name);
  if (it == constants.end())
    return std::nullopt;
  return it->second;
}

} // namespace gpubt::stdlib
