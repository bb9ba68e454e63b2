// Lookups over the generated API catalog (api_catalog_data.cpp) and the SysV register names.
#include "stdlib/api_catalog.h"

#include <algorithm>
#include <array>

namespace gpubt::stdlib {

std::string_view library_alias(ApiLibrary lib) {
  static constexpr std::array<std::string_view, 4> aliases = {"cudart", "cuda", "hip", "nccl"};
  return aliases[static_cast<size_t>(lib)];
}

bool is_library_alias(ApiLibrary lib, std::string_view target) {
  return target == library_alias(lib) || (lib == ApiLibrary::Nccl && target == "rccl");
}

const ApiFunction *find_api_function(std::string_view name) {
  auto fns = api_functions();
  auto it =
      std::find_if(fns.begin(), fns.end(), [&](const ApiFunction &f) { return f.name == name; });
  return it == fns.end() ? nullptr : &*it;
}

const ApiFunction *find_api_function(ApiLibrary lib, std::string_view name) {
  const ApiFunction *fn = find_api_function(name);
  return fn && fn->library == lib ? fn : nullptr;
}

const ApiFunction *find_api_function_by_symbol(std::string_view symbol) {
  for (const ApiFunction &fn : api_functions())
    if (std::find(fn.symbols.begin(), fn.symbols.end(), symbol) != fn.symbols.end())
      return &fn;
  return nullptr;
}

const ApiParam *find_api_param(const ApiFunction &fn, std::string_view name) {
  auto it = std::find_if(fn.params.begin(), fn.params.end(),
                         [&](const ApiParam &p) { return p.name == name; });
  return it == fn.params.end() ? nullptr : &*it;
}

std::vector<std::string_view> api_param_names(const ApiFunction &fn) {
  std::vector<std::string_view> names;
  for (const ApiParam &p : fn.params)
    names.push_back(p.name);
  return names;
}

std::string join_api_param_names(const ApiFunction &fn) {
  std::string out;
  for (const ApiParam &p : fn.params) {
    if (!out.empty())
      out += ", ";
    out += p.name;
  }
  return out;
}

// Field offsets of arch/x86/include/asm/ptrace.h struct pt_regs (x86-64).
static constexpr std::array<std::string_view, 6> arg_reg_names = {"di", "si", "dx",
                                                                  "cx", "r8", "r9"};
static constexpr std::array<uint32_t, 6> arg_reg_offsets = {112, 104, 96, 88, 72, 64};

std::string_view sysv_arg_reg_name(unsigned index) {
  return index < arg_reg_names.size() ? arg_reg_names[index] : std::string_view();
}

uint32_t pt_regs_arg_offset(unsigned index) {
  return index < arg_reg_offsets.size() ? arg_reg_offsets[index] : UINT32_MAX;
}

} // namespace gpubt::stdlib
