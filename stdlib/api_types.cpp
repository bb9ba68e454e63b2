// Catalog rows -> frontend types, and the lookup of an attach point's catalogued function.
#include "stdlib/api_types.h"

#include <algorithm>

#include "stdlib/enums.h"

namespace gpubt::stdlib {

using frontend::Type;
using frontend::TypeKind;

std::optional<ApiLibrary> library_of_alias(std::string_view target) {
  for (ApiLibrary lib : {ApiLibrary::Cudart, ApiLibrary::Cuda, ApiLibrary::Hip, ApiLibrary::Nccl})
    if (is_library_alias(lib, target))
      return lib;
  return std::nullopt;
}

const ApiFunction *api_function_for(const frontend::AttachPoint &ap) {
  if (ap.provider != frontend::Provider::Uprobe && ap.provider != frontend::Provider::Uretprobe)
    return nullptr;
  auto lib = library_of_alias(ap.target);
  const ApiFunction *fn = lib ? find_api_function(*lib, ap.func) : find_api_function(ap.func);
  if (!fn)
    fn = find_api_function_by_symbol(ap.func);
  if (fn && lib && fn->library != *lib)
    return nullptr;
  return fn;
}

// Built field by field: stdlib links below the frontend library that defines Type's factories.
static Type int_type(uint32_t size, bool is_signed) {
  Type t;
  t.kind = TypeKind::Integer;
  t.size = size;
  t.is_signed = is_signed;
  return t;
}

static Type enum_type(std::string_view name) {
  const EnumDef *def = find_enum_def(name);
  Type t = int_type(def ? def->size : 4, def && def->is_signed);
  t.kind = TypeKind::Enum;
  t.enum_name = std::string(name);
  return t;
}

Type api_param_type(const ApiParam &p) {
  switch (p.kind) {
  case ApiValueKind::Integer:
    return int_type(p.size, p.is_signed);
  case ApiValueKind::Enum:
    return enum_type(p.enum_name);
  case ApiValueKind::Dim3: {
    Type t;
    t.kind = TypeKind::Tuple;
    t.size = 12;
    t.elems.assign(3, int_type(4, false));
    return t;
  }
  case ApiValueKind::Pointer:
  case ApiValueKind::String:
  case ApiValueKind::Handle:
  case ApiValueKind::Memory: // never a value: api_arg_type refuses it
    break;
  }
  return int_type(8, false);
}

std::optional<Type> api_arg_type(const frontend::AttachPoint &ap, std::string_view field) {
  const ApiFunction *fn = api_function_for(ap);
  const ApiParam *p = fn ? find_api_param(*fn, field) : nullptr;
  if (!p || p->kind == ApiValueKind::Memory)
    return std::nullopt;
  return api_param_type(*p);
}

std::optional<Type> api_retval_type(const frontend::AttachPoint &ap) {
  const ApiFunction *fn = api_function_for(ap);
  if (!fn || fn->return_enum.empty())
    return std::nullopt;
  return enum_type(fn->return_enum);
}

std::string api_arg_error(const frontend::AttachPoint &ap, std::string_view field) {
  const ApiFunction *fn = api_function_for(ap);
  if (!fn)
    return "";
  if (const ApiParam *p = find_api_param(*fn, field))
    return p->kind != ApiValueKind::Memory
               ? ""
               : std::string(fn->name) + "'s " + std::string(field) + " is a " +
                     std::string(p->c_type) + " of " + std::to_string(p->size) +
                     " bytes passed by value, which a script cannot read" +
                     (p->c_type == "ncclUniqueId" ? ": nccl_comm_id(comm) is its hash" : "");
  return std::string(fn->name) + " has no argument '" + std::string(field) +
         "'; its arguments are: " + join_api_param_names(*fn);
}

std::string api_argn_error(const frontend::AttachPoint &ap, int index) {
  const ApiFunction *fn = ap.provider == frontend::Provider::Uprobe ? api_function_for(ap) : nullptr;
  if (!fn)
    return "";
  // argN is the N-th eightbyte of the arguments: six registers, then the stack (x86-64 SysV).
  int end = 0;
  for (const auto &p : fn->params)
    end = std::max(end, (p.loc.on_stack ? 6 : 0) + p.loc.index + p.loc.count);
  if (index < end)
    return "";
  std::string where = end == 0 ? "no arguments" : "its arguments in arg0..arg" +
                                                      std::to_string(end - 1) + " (" +
                                                      join_api_param_names(*fn) + ")";
  return std::string(fn->name) + " has " + where + "; arg" + std::to_string(index) +
         " is past them" + (end == 0 ? "" : ": use args.NAME");
}

// "void *" -> "void*", "const char *" -> "const char*": pointers as DWARF's lines spell them.
static std::string dwarf_spelling(std::string_view c_type) {
  std::string out;
  for (char c : c_type) {
    if (c == '*' && !out.empty() && out.back() == ' ')
      out.pop_back();
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> api_listing_lines(const frontend::AttachPoint &ap) {
  const ApiFunction *fn = api_function_for(ap);
  if (!fn)
    return {};
  std::vector<std::string> lines;
  for (const auto &p : fn->params)
    lines.push_back((p.kind == ApiValueKind::Enum ? std::string(p.enum_name)
                                                  : dwarf_spelling(p.c_type)) +
                    " " + std::string(p.name));
  if (ap.provider == frontend::Provider::Uretprobe && !fn->return_enum.empty())
    lines.push_back(std::string(fn->return_enum) + " retval");
  return lines;
}

} // namespace gpubt::stdlib
