// DWARF -> parameter lists and C text. libdw (elfutils) reads the DIEs: it is what the
// kernel's own tools (pahole, perf) use, and it keeps LLVM out of runtime/.
#include "runtime/process/dwarf_types.h"

#include <elfutils/libdw.h>
#include <dwarf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>

namespace gpubt::runtime {

// Records behind this many pointers from what a script names are defined in full.
constexpr int kPointerHops = 3;

struct DebugInfo::Impl {
  int fd = -1;
  Dwarf *dwarf = nullptr;
  std::map<std::string, Dwarf_Off> types; // "struct Foo", "enum E", typedef names: definitions
  std::map<std::string, Dwarf_Off> functions;

  ~Impl() {
    if (dwarf)
      dwarf_end(dwarf);
    if (fd >= 0)
      close(fd);
  }

  bool die(Dwarf_Off off, Dwarf_Die *out) const { return dwarf_offdie(dwarf, off, out) != nullptr; }
};

namespace {

bool has_flag(Dwarf_Die *d, unsigned attr) {
  Dwarf_Attribute a;
  bool v = false;
  return dwarf_attr(d, attr, &a) && dwarf_formflag(&a, &v) == 0 && v;
}

const char *name_of(Dwarf_Die *d) {
  const char *n = dwarf_diename(d);
  return n ? n : "";
}

bool is_c_identifier(const std::string &s) {
  if (s.empty() || !(isalpha(uint8_t(s[0])) || s[0] == '_'))
    return false;
  for (char ch : s)
    if (!(isalnum(uint8_t(ch)) || ch == '_'))
      return false;
  return true;
}

// The DIE's DW_AT_type; false for void.
bool type_of(Dwarf_Die *d, Dwarf_Die *out) {
  Dwarf_Attribute a;
  return dwarf_attr_integrate(d, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

bool is_record_tag(int tag) {
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

bool is_qualifier(int tag) {
  return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
         tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

// "struct Foo" / "union U" / "enum E" for a named record or enum; "" when anonymous or not C.
std::string tagged_name(Dwarf_Die *d) {
  int tag = dwarf_tag(d);
  std::string n = name_of(d);
  if (!is_c_identifier(n))
    return "";
  if (tag == DW_TAG_union_type)
    return "union " + n;
  if (tag == DW_TAG_enumeration_type)
    return "enum " + n;
  return is_record_tag(tag) ? "struct " + n : "";
}

// A C spelling of a base type from its encoding and size (C++'s `bool`, `wchar_t` are not C).
std::string base_spelling(Dwarf_Die *d, bool force_signed) {
  std::string n = name_of(d);
  Dwarf_Word enc = 0;
  Dwarf_Attribute a;
  if (dwarf_attr(d, DW_AT_encoding, &a))
    dwarf_formudata(&a, &enc);
  int size = dwarf_bytesize(d);
  switch (enc) {
  case DW_ATE_boolean:
    return "_Bool";
  case DW_ATE_float:
    return size == 4 ? "float" : size == 8 ? "double" : "long double";
  case DW_ATE_signed_char:
  case DW_ATE_unsigned_char:
    if (n == "char" && !force_signed)
      return "char";
    [[fallthrough]];
  case DW_ATE_signed:
  case DW_ATE_unsigned: {
    bool sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
    const char *base = size == 1 ? "char" : size == 2 ? "short" : size == 4 ? "int"
                     : size == 8 ? "long" : "__int128";
    // A plain `int x:3` reads unsigned (bpftrace's choice, which C leaves to the compiler):
    // DWARF says the field is signed, so say `signed`.
    return std::string(sign ? (force_signed || size == 1 ? "signed " : "") : "unsigned ") + base;
  }
  default:
    return size == 1 ? "unsigned char" : size == 2 ? "unsigned short"
         : size == 4 ? "unsigned int" : "unsigned long";
  }
}

// The subrange bounds of an array type: "[3][4]".
std::string array_dims(Dwarf_Die *arr) {
  std::string out;
  Dwarf_Die child;
  if (dwarf_child(arr, &child) != 0)
    return "[0]";
  do {
    if (dwarf_tag(&child) != DW_TAG_subrange_type)
      continue;
    Dwarf_Attribute a;
    Dwarf_Word n = 0;
    if (dwarf_attr(&child, DW_AT_count, &a)) {
      dwarf_formudata(&a, &n);
    } else if (dwarf_attr(&child, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &n) == 0) {
      n += 1;
    }
    out += "[" + std::to_string(n) + "]";
  } while (dwarf_siblingof(&child, &child) == 0);
  return out.empty() ? "[0]" : out;
}

// bpftrace's listing spelling: "char**", "struct Foo*", "const char*".
std::string list_spelling(Dwarf_Die *t, bool is_void) {
  if (is_void)
    return "void";
  int tag = dwarf_tag(t);
  Dwarf_Die inner;
  bool has_inner = type_of(t, &inner);
  switch (tag) {
  case DW_TAG_pointer_type:
  case DW_TAG_reference_type:
    return list_spelling(&inner, !has_inner) + "*";
  case DW_TAG_const_type:
    return "const " + list_spelling(&inner, !has_inner);
  case DW_TAG_volatile_type:
    return "volatile " + list_spelling(&inner, !has_inner);
  case DW_TAG_array_type:
    return list_spelling(&inner, !has_inner) + array_dims(t);
  case DW_TAG_subroutine_type:
    return "void (*)()";
  default: {
    std::string tagged = tagged_name(t);
    return tagged.empty() ? name_of(t) : tagged;
  }
  }
}

class Emitter {
public:
  Emitter(const DebugInfo::Impl &info, const std::set<std::string> &skip,
          std::set<std::string> &defined, std::string &text)
      : info_(info), skip_(skip), defined_(defined), text_(text) {}

  // Emits what using T (by value when COMPLETE) needs, then the queued pointed-at records.
  void need_all(Dwarf_Die *t, bool complete) {
    need(t, complete, kPointerHops);
    while (!queue_.empty()) {
      auto [off, hops] = queue_.front();
      queue_.pop_front();
      Dwarf_Die d;
      if (info_.die(off, &d))
        need(&d, true, hops);
    }
  }

  // A declaration of NAME with type T (null: void); `bits` > 0 for a bitfield.
  std::string decl(Dwarf_Die *t, const std::string &name, bool signed_bitfield = false) {
    auto sp = [&](const std::string &s) { return name.empty() ? s : s + " " + name; };
    if (!t)
      return sp("void");
    Dwarf_Die inner;
    bool has_inner = type_of(t, &inner);
    switch (dwarf_tag(t)) {
    case DW_TAG_base_type:
      return sp(base_spelling(t, signed_bitfield));
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
      if (!has_inner || opaque_pointee(&inner))
        return "void *" + name;
      Dwarf_Die bare = inner;
      while (is_qualifier(dwarf_tag(&bare)) && type_of(&bare, &bare)) {
      }
      bool paren = dwarf_tag(&bare) == DW_TAG_array_type;
      return decl(&inner, paren ? "(*" + name + ")" : "*" + name);
    }
    case DW_TAG_array_type:
      return decl(has_inner ? &inner : nullptr, name + array_dims(t));
    case DW_TAG_typedef: {
      std::string n = name_of(t);
      if (is_c_identifier(n))
        return sp(n);
      return decl(has_inner ? &inner : nullptr, name);
    }
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
    case DW_TAG_enumeration_type: {
      std::string tagged = tagged_name(t);
      if (!tagged.empty())
        return sp(tagged);
      if (!name_of(t)[0])
        return sp(body(t));
      // A C++ name C cannot spell: its bytes.
      return "unsigned char " + name + "[" + std::to_string(std::max(dwarf_bytesize(t), 0)) + "]";
    }
    default:
      if (is_qualifier(dwarf_tag(t)))
        return decl(has_inner ? &inner : nullptr, name, signed_bitfield);
      return "void *" + name; // functions by value cannot occur; anything else: a word
    }
  }

private:
  // Pointees that C cannot name (functions, C++ classes with `::` or templates) read as void *.
  static bool opaque_pointee(Dwarf_Die *t) {
    Dwarf_Die d = *t;
    while (is_qualifier(dwarf_tag(&d)) && type_of(&d, &d)) {
    }
    int tag = dwarf_tag(&d);
    if (tag == DW_TAG_subroutine_type)
      return true;
    return (is_record_tag(tag) || tag == DW_TAG_enumeration_type) && name_of(&d)[0] &&
           tagged_name(&d).empty();
  }

  // A record declared only here (DW_AT_declaration): its definition elsewhere, if any.
  bool definition_of(Dwarf_Die *t, Dwarf_Die *out) {
    std::string tagged = tagged_name(t);
    auto it = info_.types.find(tagged);
    return it != info_.types.end() && info_.die(it->second, out);
  }

  void need(Dwarf_Die *t, bool complete, int hops) {
    Dwarf_Die inner;
    bool has_inner = type_of(t, &inner);
    int tag = dwarf_tag(t);
    switch (tag) {
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
      if (has_inner && !opaque_pointee(&inner)) {
        need(&inner, false, hops);
        if (hops > 0)
          queue_.push_back({dwarf_dieoffset(&inner), hops - 1});
      }
      return;
    case DW_TAG_array_type:
      if (has_inner)
        need(&inner, true, hops);
      return;
    case DW_TAG_typedef: {
      std::string n = name_of(t);
      if (!is_c_identifier(n)) {
        if (has_inner)
          need(&inner, complete, hops);
        return;
      }
      if (has_inner)
        need(&inner, complete, hops);
      if (skip_.count(n) || !defined_.insert(n).second)
        return;
      text_ += "typedef " + decl(has_inner ? &inner : nullptr, n) + ";\n";
      return;
    }
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
    case DW_TAG_enumeration_type: {
      std::string tagged = tagged_name(t);
      if (tagged.empty()) {
        if (!name_of(t)[0])
          members_need(t, hops); // anonymous: written inline where used
        return;
      }
      if ((!complete && tag != DW_TAG_enumeration_type) || skip_.count(tagged) ||
          defined_.count(tagged))
        return;
      Dwarf_Die def = *t;
      if (has_flag(t, DW_AT_declaration) && !definition_of(t, &def))
        return;
      defined_.insert(tagged);
      members_need(&def, hops);
      text_ += body(&def) + ";\n";
      return;
    }
    default:
      if (is_qualifier(tag) && has_inner)
        need(&inner, complete, hops);
      return;
    }
  }

  void members_need(Dwarf_Die *rec, int hops) {
    Dwarf_Die m;
    if (dwarf_child(rec, &m) != 0)
      return;
    do {
      Dwarf_Die mt;
      if (dwarf_tag(&m) == DW_TAG_member && type_of(&m, &mt))
        need(&mt, true, hops);
    } while (dwarf_siblingof(&m, &m) == 0);
  }

  // "struct Foo { int a; char b[10]; }" (no `;`), anonymous records inline.
  std::string body(Dwarf_Die *rec) {
    int tag = dwarf_tag(rec);
    std::string head = tagged_name(rec);
    if (head.empty())
      head = tag == DW_TAG_union_type ? "union" : tag == DW_TAG_enumeration_type ? "enum" : "struct";
    std::string out = head + " {";
    Dwarf_Die m;
    bool first = true;
    if (dwarf_child(rec, &m) == 0) {
      do {
        if (tag == DW_TAG_enumeration_type && dwarf_tag(&m) == DW_TAG_enumerator) {
          Dwarf_Attribute a;
          Dwarf_Sword v = 0;
          if (dwarf_attr(&m, DW_AT_const_value, &a))
            dwarf_formsdata(&a, &v);
          out += std::string(first ? " " : ", ") + name_of(&m) + " = " + std::to_string(v);
          first = false;
        } else if (dwarf_tag(&m) == DW_TAG_member) {
          Dwarf_Die mt;
          bool has_type = type_of(&m, &mt);
          int bits = dwarf_hasattr(&m, DW_AT_bit_size) ? dwarf_bitsize(&m) : 0;
          out += " " + decl(has_type ? &mt : nullptr, name_of(&m), bits > 0);
          if (bits > 0)
            out += " : " + std::to_string(bits);
          out += ";";
        }
      } while (dwarf_siblingof(&m, &m) == 0);
    }
    if (tag == DW_TAG_enumeration_type && first)
      out += " __gpubt_empty_enum_" + std::to_string(dwarf_dieoffset(rec));
    return out + " }";
  }

  const DebugInfo::Impl &info_;
  const std::set<std::string> &skip_;
  std::set<std::string> &defined_;
  std::string &text_;
  std::deque<std::pair<Dwarf_Off, int>> queue_;
};

// Indexes the named type definitions and the functions with parameters of every CU.
void index_cu(DebugInfo::Impl &impl, Dwarf_Die *cu) {
  Dwarf_Die d;
  if (dwarf_child(cu, &d) != 0)
    return;
  do {
    int tag = dwarf_tag(&d);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Die child;
      bool has_params = dwarf_child(&d, &child) == 0;
      std::string n = name_of(&d);
      // A definition with its parameters wins over a declaration.
      if (!n.empty() && (!impl.functions.count(n) || (has_params && dwarf_hasattr(&d, DW_AT_low_pc))))
        impl.functions[n] = dwarf_dieoffset(&d);
      continue;
    }
    std::string key = tag == DW_TAG_typedef ? std::string(name_of(&d)) : tagged_name(&d);
    if (key.empty() || (tag != DW_TAG_typedef && has_flag(&d, DW_AT_declaration)))
      continue;
    impl.types.emplace(key, dwarf_dieoffset(&d));
  } while (dwarf_siblingof(&d, &d) == 0);
}

} // namespace

DebugInfo::DebugInfo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DebugInfo::~DebugInfo() = default;

std::unique_ptr<DebugInfo> DebugInfo::open(const std::string &path) {
  auto impl = std::make_unique<Impl>();
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0)
    return nullptr;
  impl->dwarf = dwarf_begin(impl->fd, DWARF_C_READ);
  if (!impl->dwarf)
    return nullptr;
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  while (dwarf_nextcu(impl->dwarf, off, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(impl->dwarf, off + header, &cu))
      index_cu(*impl, &cu);
    off = next;
  }
  if (impl->types.empty() && impl->functions.empty())
    return nullptr;
  return std::unique_ptr<DebugInfo>(new DebugInfo(std::move(impl)));
}

// The formal parameters of function FUNC, in order.
static std::vector<Dwarf_Die> param_dies(const DebugInfo::Impl &impl, const std::string &func,
                                        bool *found) {
  std::vector<Dwarf_Die> out;
  auto it = impl.functions.find(func);
  Dwarf_Die fn, child;
  *found = it != impl.functions.end() && impl.die(it->second, &fn);
  if (!*found || dwarf_child(&fn, &child) != 0)
    return out;
  do {
    if (dwarf_tag(&child) == DW_TAG_formal_parameter)
      out.push_back(child);
  } while (dwarf_siblingof(&child, &child) == 0);
  return out;
}

std::optional<std::vector<DwarfParam>> DebugInfo::params(const std::string &func) const {
  bool found = false;
  auto dies = param_dies(*impl_, func, &found);
  if (!found)
    return std::nullopt;
  std::vector<DwarfParam> out;
  for (auto &p : dies) {
    Dwarf_Die t;
    bool has_type = type_of(&p, &t);
    out.push_back({name_of(&p), list_spelling(&t, !has_type)});
  }
  return out;
}

DwarfCWriter::DwarfCWriter(const DebugInfo &info, std::set<std::string> skip)
    : info_(info), skip_(std::move(skip)) {}

bool DwarfCWriter::add_type(const std::string &name) {
  const auto &impl = *info_.impl_;
  auto it = impl.types.find(name);
  Dwarf_Die d;
  if (it == impl.types.end() || !impl.die(it->second, &d))
    return false;
  Emitter(impl, skip_, defined_, text_).need_all(&d, true);
  return true;
}

bool DwarfCWriter::add_params_record(const std::string &func, const std::string &record) {
  const auto &impl = *info_.impl_;
  bool found = false;
  auto dies = param_dies(impl, func, &found);
  if (!found)
    return false;
  Emitter e(impl, skip_, defined_, text_);
  std::string body = "struct " + record + " {";
  for (auto &p : dies) {
    Dwarf_Die t;
    bool has_type = type_of(&p, &t);
    if (has_type)
      e.need_all(&t, true);
    body += " " + e.decl(has_type ? &t : nullptr, name_of(&p)) + ";";
  }
  text_ += body + " };\n";
  defined_.insert("struct " + record);
  return true;
}

} // namespace gpubt::runtime
