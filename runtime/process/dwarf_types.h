// A binary's functions and types from its DWARF debug info (libdw): the parameters of a function
// for `-lv` and `args->NAME` in uprobes, and its struct/union/enum/typedef types written as C so
// that clang lays them out the way it lays out a script's own definitions.
#pragma once
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpubt::runtime {

struct DwarfParam {
  std::string name;
  std::string type; // as bpftrace lists it: "int", "char**", "struct Foo*"
};

class DebugInfo {
public:
  // Null when PATH cannot be read or has no DWARF.
  static std::unique_ptr<DebugInfo> open(const std::string &path);
  ~DebugInfo();
  DebugInfo(const DebugInfo &) = delete;
  DebugInfo &operator=(const DebugInfo &) = delete;

  // FUNC's parameters in order; nullopt when the debug info has no such function.
  std::optional<std::vector<DwarfParam>> params(const std::string &func) const;

  struct Impl;

private:
  explicit DebugInfo(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class DwarfCWriter;
};

// C definitions written from one binary's debug info, each type once, dependencies first.
// Records reached through pointers are defined too, a few pointers deep (`p->a->b` works).
class DwarfCWriter {
public:
  // Records and typedefs named in SKIP are left to others (the script defines them).
  DwarfCWriter(const DebugInfo &info, std::set<std::string> skip);
  // Defines NAME ("struct Foo", "union U", "enum E", a typedef name); false if unknown here.
  bool add_type(const std::string &name);
  // Defines `struct RECORD { <FUNC's parameters as members> };`; false without such a function.
  bool add_params_record(const std::string &func, const std::string &record);
  const std::string &text() const { return text_; }
  // What the text defines ("struct Foo", typedef names).
  const std::set<std::string> &defined() const { return defined_; }

private:
  const DebugInfo &info_;
  std::set<std::string> skip_, defined_;
  std::string text_;
};

} // namespace gpubt::runtime
