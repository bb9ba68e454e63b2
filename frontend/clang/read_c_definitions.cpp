// C definitions -> CTypes through libclang: the definitions are parsed as a header laid out at
// their own lines and columns, so clang's locations are the script's.
#include "frontend/clang/read_c_definitions.h"

#include <clang-c/Index.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "frontend/ast_walk.h"
#include "frontend/clang/btf_definitions.h"
#include "frontend/clang/script_records.h"

namespace gpubt::frontend {

namespace {

constexpr const char *kMainFile = "definitions.h";
constexpr const char *kPreludeFile = "/gpubt/include/__gpubt_prelude.h";
constexpr const char *kBtfFile = "/gpubt/include/__gpubt_btf.h";
constexpr const char *kDwarfFile = "/gpubt/include/__gpubt_debug_info.h";

// The fixed-width integer names bpftrace's own headers give definitions without any #include.
const std::string &prelude() {
  static const std::string text = [] {
    std::string out = "#pragma once\ntypedef _Bool bool;\n";
    for (const auto &t : prelude_typedefs())
      out += std::string("typedef ") + t.c_type + " " + t.name + ";\n";
    return out;
  }();
  return text;
}

std::string str(CXString s) {
  const char *c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

// The definitions at their own place: everything else in the script blanked, newlines kept.
std::string laid_out(const Program &program, const SourceFile &file) {
  std::string out;
  uint32_t line = 1, col = 1;
  for (const auto &d : program.c_definitions) {
    for (; line < d.span.line; ++line, col = 1)
      out += '\n';
    for (; col < d.span.col; ++col)
      out += ' ';
    out += d.text;
    // bpftrace takes `struct Foo { ... }` without its `;`.
    size_t last = d.text.find_last_not_of(" \t\r\n");
    if (last != std::string::npos && d.text[last] == '}')
      out += ';';
    for (char ch : d.text) {
      if (ch == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    out += '\n';
    ++line;
    col = 1;
  }
  return out;
}

class TypeReader {
public:
  explicit TypeReader(CTypes &out) : out_(out) {}

  // A C type as a gpubt Type. Records behind pointers are stubs (name and size), which also
  // breaks the cycle of `struct list { struct list *next; }`.
  Type read(CXType t, bool behind_pointer = false) {
    t = clang_getCanonicalType(t);
    long long size = clang_Type_getSizeOf(t);
    uint32_t bytes = size > 0 ? uint32_t(size) : 0;
    switch (t.kind) {
    case CXType_Bool:
    case CXType_Char_U:
    case CXType_UChar:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
      return Type::integer(bytes, false);
    case CXType_Char_S:
    case CXType_SChar:
    case CXType_Short:
    case CXType_Int:
    case CXType_Long:
    case CXType_LongLong:
    case CXType_Enum:
      return Type::integer(bytes, t.kind == CXType_Enum ? is_signed_enum(t) : true);
    case CXType_Pointer: {
      CXType pointee = clang_getPointeeType(t);
      Type inner = clang_getCanonicalType(pointee).kind == CXType_Void
                       ? Type::integer(1, false) // void *: bytes, as bpftrace's arithmetic
                       : read(pointee, true);
      return Type::pointer(std::move(inner));
    }
    case CXType_ConstantArray: {
      Type elem = read(clang_getArrayElementType(t), behind_pointer);
      long long n = clang_getArraySize(t);
      CXTypeKind ek = clang_getCanonicalType(clang_getArrayElementType(t)).kind;
      // char[N] is a string, as bpftrace prints it.
      if (ek == CXType_Char_S || ek == CXType_Char_U || ek == CXType_SChar)
        return Type::string(uint32_t(n));
      return Type::array(std::move(elem), n > 0 ? uint32_t(n) : 0);
    }
    case CXType_Record:
      return record(t, behind_pointer);
    default: {
      // float, double, function pointers, ...: opaque bytes of their size, read as integers.
      Type r = Type::integer(bytes == 1 || bytes == 2 || bytes == 4 ? bytes : 8, false);
      return r;
    }
    }
  }

private:
  static bool is_signed_enum(CXType t) {
    CXType under = clang_getEnumDeclIntegerType(clang_getTypeDeclaration(t));
    switch (clang_getCanonicalType(under).kind) {
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_UShort:
    case CXType_UChar:
      return false;
    default:
      return true;
    }
  }

  // Whether the declaration of FIELD says `signed` (clang's types cannot tell `int` from it).
  static bool spells_signed(CXCursor field) {
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(field);
    CXToken *tokens = nullptr;
    unsigned n = 0;
    clang_tokenize(tu, clang_getCursorExtent(field), &tokens, &n);
    bool found = false;
    for (unsigned i = 0; i < n && !found; ++i)
      found = str(clang_getTokenSpelling(tu, tokens[i])) == "signed";
    clang_disposeTokens(tu, tokens, n);
    return found;
  }

  Type record(CXType t, bool behind_pointer) {
    Type r;
    r.kind = TypeKind::Record;
    r.enum_name = str(clang_getTypeSpelling(t));
    long long size = clang_Type_getSizeOf(t);
    r.size = size > 0 ? uint32_t(size) : 0;
    if (behind_pointer)
      return r;
    add_fields(t, 0, r);
    return r;
  }

  // T's fields into R, BASE_BITS into it. An anonymous struct or union's members are the
  // record's own, as in C (`sk->__sk_common.skc_num` in the kernel's sock_common).
  void add_fields(CXType t, long long base_bits, Type &r) {
    struct Ctx {
      TypeReader *self;
      Type *rec;
      long long base;
    } ctx{this, &r, base_bits};
    clang_Type_visitFields(
        t,
        [](CXCursor field, CXClientData data) {
          auto *c = static_cast<Ctx *>(data);
          long long bits = c->base + std::max(0LL, clang_Cursor_getOffsetOfField(field));
          CXType type = clang_getCanonicalType(clang_getCursorType(field));
          if (type.kind == CXType_Record &&
              clang_Cursor_isAnonymousRecordDecl(clang_getTypeDeclaration(type))) {
            c->self->add_fields(type, bits, *c->rec);
            return CXVisit_Continue;
          }
          c->rec->names.push_back(str(clang_getCursorSpelling(field)));
          c->rec->offsets.push_back(uint32_t(bits / 8));
          int width = clang_Cursor_isBitField(field) ? clang_getFieldDeclBitWidth(field) : 0;
          c->rec->bitfields.push_back(width > 0 ? uint16_t((bits % 8) << 8 | width) : 0);
          Type ft = c->self->read(clang_getCursorType(field));
          // C leaves whether a plain `int x:3` is signed to the compiler; bpftrace reads it
          // unsigned. Only `signed int x:3` sign-extends.
          if (width > 0 && ft.kind == TypeKind::Integer && ft.is_signed)
            ft.is_signed = spells_signed(field);
          c->rec->elems.push_back(std::move(ft));
          return CXVisit_Continue;
        },
        &ctx);
  }

  CTypes &out_;
};

struct Visit {
  CTypes *out;
  TypeReader *reader;
  CXTranslationUnit tu;
};

// Integer macros (`#define N 314`, `#define M (1 << 3)` is not read) become constants. Headers
// can define tens of thousands: past this many, only the script's own are read.
constexpr size_t kMaxHeaderConstants = 20000;
void read_macro(CXCursor c, Visit &v) {
  CXToken *tokens = nullptr;
  unsigned n = 0;
  clang_tokenize(v.tu, clang_getCursorExtent(c), &tokens, &n);
  if (n == 2 && clang_getTokenKind(tokens[1]) == CXToken_Literal) {
    std::string lit = str(clang_getTokenSpelling(v.tu, tokens[1]));
    while (!lit.empty() && (lit.back() == 'u' || lit.back() == 'U' || lit.back() == 'l' ||
                            lit.back() == 'L'))
      lit.pop_back();
    char *end = nullptr;
    long long value = std::strtoll(lit.c_str(), &end, 0);
    if (!lit.empty() && end && *end == 0)
      v.out->constants[str(clang_getTokenSpelling(v.tu, tokens[0]))] = value;
  } else if (n == 2 && clang_getTokenKind(tokens[1]) == CXToken_Identifier) {
    // `#define AF_INET PF_INET`: another name for a constant read before it.
    auto it = v.out->constants.find(str(clang_getTokenSpelling(v.tu, tokens[1])));
    if (it != v.out->constants.end())
      v.out->constants[str(clang_getTokenSpelling(v.tu, tokens[0]))] = it->second;
  }
  clang_disposeTokens(v.tu, tokens, n);
}

// A named enum: its type ("enum Foo", printed by name as printf's %s does) and its constants'
// names, so that `ONE` and `(enum Foo)1` print as ONE (bpftrace head).
void read_enum(CXCursor c, Visit &v) {
  CXType t = clang_getCursorType(c);
  std::string name = str(clang_getTypeSpelling(t));
  if (name.find("(unnamed") != std::string::npos || name.find("(anonymous") != std::string::npos)
    return;
  Type e = v.reader->read(t);
  e.kind = TypeKind::Enum;
  e.enum_name = name;
  v.out->types[name] = e;
  struct Ctx {
    CTypes *out;
    const std::string *name;
  } ctx{v.out, &name};
  clang_visitChildren(
      c,
      [](CXCursor k, CXCursor, CXClientData d) {
        auto &x = *static_cast<Ctx *>(d);
        if (clang_getCursorKind(k) == CXCursor_EnumConstantDecl) {
          std::string constant = str(clang_getCursorSpelling(k));
          int64_t value = clang_getEnumConstantDeclValue(k);
          x.out->enums[*x.name].emplace(value, constant); // the first name of a value wins
          x.out->constant_enums[constant] = *x.name;
        }
        return CXChildVisit_Continue;
      },
      &ctx);
}

CXChildVisitResult visit(CXCursor c, CXCursor, CXClientData data) {
  auto &v = *static_cast<Visit *>(data);
  switch (clang_getCursorKind(c)) {
  case CXCursor_MacroDefinition: // the script's and its headers' (--include errno.h: EPERM)
    if (!clang_Location_isInSystemHeader(clang_getCursorLocation(c)) ||
        v.out->constants.size() < kMaxHeaderConstants)
      read_macro(c, v);
    return CXChildVisit_Continue;
  case CXCursor_StructDecl:
  case CXCursor_UnionDecl:
    if (clang_isCursorDefinition(c)) {
      CXType t = clang_getCursorType(c);
      Type r = v.reader->read(t);
      if (!r.enum_name.empty() && r.enum_name.find("(unnamed") == std::string::npos &&
          r.enum_name.find("(anonymous") == std::string::npos)
        v.out->types[r.enum_name] = std::move(r);
    }
    return CXChildVisit_Recurse; // nested definitions are visible by name, as in C
  case CXCursor_EnumDecl:
    if (clang_isCursorDefinition(c))
      read_enum(c, v);
    return CXChildVisit_Recurse;
  case CXCursor_EnumConstantDecl:
    v.out->constants[str(clang_getCursorSpelling(c))] = clang_getEnumConstantDeclValue(c);
    return CXChildVisit_Continue;
  case CXCursor_TypedefDecl: {
    Type t = v.reader->read(clang_getTypedefDeclUnderlyingType(c));
    v.out->types[str(clang_getCursorSpelling(c))] = std::move(t);
    return CXChildVisit_Continue;
  }
  default:
    return CXChildVisit_Continue;
  }
}

SourceSpan span_of(CXSourceLocation loc) {
  unsigned line = 0, col = 0;
  clang_getSpellingLocation(loc, nullptr, &line, &col, nullptr);
  SourceSpan s;
  s.line = s.end_line = line;
  s.col = col;
  s.end_col = col + 1;
  return s;
}

// Clang's errors: in the script at their place; in a header, named by file:line.
bool report(CXTranslationUnit tu, Diagnostics &diags) {
  bool failed = false;
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      failed = true;
      CXSourceLocation loc = clang_getDiagnosticLocation(d);
      std::string msg = str(clang_getDiagnosticSpelling(d));
      if (clang_Location_isFromMainFile(loc)) {
        diags.error(span_of(loc), msg);
      } else {
        CXFile f;
        unsigned line = 0;
        clang_getSpellingLocation(loc, &f, &line, nullptr, nullptr);
        diags.error({}, str(clang_getFileName(f)) + ":" + std::to_string(line) + ": " + msg);
      }
    }
    clang_disposeDiagnostic(d);
  }
  return failed;
}

// Parses the laid-out definitions after the prelude, then BTF and DWARF text when given.
CXTranslationUnit parse(CXIndex index, const std::string &text, const std::string &btf,
                        const std::string &debug_info, const CDefinitionOptions &options) {
  std::vector<std::string> args = {"-x", "c", "-std=gnu11", "-nostdinc++", "-include",
                                   kPreludeFile, "-I/gpubt/include"};
  if (kernel_btf_available())
    args.push_back("-DBPFTRACE_HAVE_BTF");
  if (!btf.empty()) {
    args.push_back("-include");
    args.push_back(kBtfFile);
  }
  if (!debug_info.empty()) {
    args.push_back("-include");
    args.push_back(kDwarfFile);
  }
  for (const auto &d : options.include_dirs)
    args.push_back("-I" + d);
  for (const auto &f : options.includes) {
    args.push_back("-include");
    args.push_back(f);
  }
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  CXUnsavedFile files[] = {
      {kMainFile, text.c_str(), static_cast<unsigned long>(text.size())},
      {kPreludeFile, prelude().c_str(), static_cast<unsigned long>(prelude().size())},
      {kBtfFile, btf.c_str(), static_cast<unsigned long>(btf.size())},
      {kDwarfFile, debug_info.c_str(), static_cast<unsigned long>(debug_info.size())}};
  CXTranslationUnit tu = nullptr;
  CXErrorCode rc = clang_parseTranslationUnit2(
      index, kMainFile, argv.data(), int(argv.size()), files, 4,
      CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies, &tu);
  return rc == CXError_Success ? tu : nullptr;
}

// Names a translation unit defines: "struct X" (with a body), "enum X", typedef names and enum
// constants, bare.
CXChildVisitResult collect_names(CXCursor c, CXCursor, CXClientData data) {
  auto &out = *static_cast<std::set<std::string> *>(data);
  std::string name = str(clang_getCursorSpelling(c));
  switch (clang_getCursorKind(c)) {
  case CXCursor_StructDecl:
  case CXCursor_UnionDecl:
  case CXCursor_EnumDecl:
    if (clang_isCursorDefinition(c) && !name.empty() && name.find(' ') == std::string::npos) {
      auto kind = clang_getCursorKind(c);
      out.insert((kind == CXCursor_StructDecl ? "struct " : kind == CXCursor_UnionDecl ? "union "
                                                                                        : "enum ") +
                 name);
    }
    return CXChildVisit_Recurse;
  case CXCursor_TypedefDecl:
  case CXCursor_EnumConstantDecl:
    out.insert(name);
    return CXChildVisit_Continue;
  default:
    return CXChildVisit_Continue;
  }
}

// BTF's C text with the names TAKEN by the script's own definitions, its headers or the debug
// info renamed (__gpubt_btf_NAME): glibc's `loff_t` or `struct iovec` next to the kernel's, or a
// script's own `struct task_struct { int x; }`, then do not clash; the script's win.
std::string rename_clashes(const std::string &text, const std::set<std::string> &taken) {
  const std::string prefix = "__gpubt_btf_";
  if (taken.empty())
    return text;
  std::string out;
  out.reserve(text.size());
  std::string keyword; // the struct/union/enum keyword just before, if any
  for (size_t i = 0; i < text.size();) {
    char ch = text[i];
    if (!(isalpha(uint8_t(ch)) || ch == '_')) {
      if (!isspace(uint8_t(ch)))
        keyword.clear();
      out += ch;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (isalnum(uint8_t(text[j])) || text[j] == '_'))
      ++j;
    std::string word = text.substr(i, j - i);
    bool clash =
        keyword.empty() ? taken.count(word) > 0 : taken.count(keyword + " " + word) > 0;
    out += clash ? prefix + word : word;
    keyword = word == "struct" || word == "union" || word == "enum" ? word : "";
    i = j;
  }
  return out;
}

} // namespace

CTypes read_c_definitions(const Program &program, const SourceFile &file, Diagnostics &diags,
                          const CDefinitionOptions &options) {
  CTypes out;
  std::string text = laid_out(program, file);
  std::unique_ptr<void, void (*)(CXIndex)> index(clang_createIndex(0, 0), clang_disposeIndex);
  // What the script and its headers define themselves, from a first reading without the
  // kernel's and the binaries' types (its errors are the second reading's to report).
  std::set<std::string> own;
  if (!program.c_definitions.empty() || !options.includes.empty()) {
    CXTranslationUnit first = parse(index.get(), text, "", "", options);
    if (first) {
      clang_visitChildren(clang_getTranslationUnitCursor(first), collect_names, &own);
      clang_disposeTranslationUnit(first);
    }
  }
  // The kernel's types the script names but neither it nor the debug info defines.
  std::set<std::string> wanted = used_records(program);
  wanted.insert(options.kernel_types.begin(), options.kernel_types.end());
  for (const auto &n : own)
    wanted.erase(n);
  std::set<std::string> from_debug_info;
  std::string debug_info = options.debug_info ? options.debug_info(own, from_debug_info) : "";
  for (const auto &n : from_debug_info)
    wanted.erase(n);
  // BTF's copies of what the script, its headers or the debug info define step aside.
  std::set<std::string> taken = own;
  taken.insert(from_debug_info.begin(), from_debug_info.end());
  std::string btf = rename_clashes(kernel_type_definitions(wanted), taken);
  if (program.c_definitions.empty() && options.includes.empty() && btf.empty() &&
      debug_info.empty())
    return out;
  CXTranslationUnit tu = parse(index.get(), text, btf, debug_info, options);
  CXErrorCode rc = tu ? CXError_Success : CXError_Failure;
  if (rc != CXError_Success || !tu) {
    diags.error(program.c_definitions.empty() ? SourceSpan{} : program.c_definitions[0].span,
                "clang could not read the C definitions (libclang error " +
                    std::to_string(int(rc)) + ")");
    return out;
  }
  if (!report(tu, diags)) {
    TypeReader reader(out);
    Visit v{&out, &reader, tu};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, &v);
  }
  clang_disposeTranslationUnit(tu);
  return out;
}

} // namespace gpubt::frontend
