// The table of script functions (count, hist, printf, str, ...): arity, argument rules,
// what they yield and where they are available. Checker and codegen both read it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/builtin_ids.h"
#include "frontend/types.h"

namespace gpubt::stdlib {

using frontend::FunctionId;

enum class FunctionKind {
  Aggregation, // only as the whole value of a map assignment: @x = count()
  Statement,   // void: printf(...), exit()
  Value,       // an expression: str(arg0)
};

enum class ArgRule : uint8_t {
  Any,
  Integer,       // "only supports integer arguments (string provided)"
  IntegerLiteral,// lhist bounds: "expects a integer literal (integer provided)"
  Format,        // printf's format: "expects a string literal (integer provided)", checked early
  StringLiteral, // time's format: the same message, checked with the types
  Map,           // "expects a map to be provided"
  IntOrPointer,  // str's source: "expects an integer or a pointer type as first argument ..."
  String,        // strncmp's strings: "expects a string argument (integer provided)"
};

constexpr int kVariadic = 255;
constexpr uint8_t kHostContext = 1, kGpuContext = 2;

struct FunctionInfo {
  std::string_view name;
  FunctionId id;
  FunctionKind kind;
  uint8_t min_args, max_args; // max kVariadic: any number
  std::array<ArgRule, 4> args; // rule for argument i; arguments past 3 use args[3]
  frontend::TypeKind result;   // Count..Lhist for aggregations, String for str, None if void
  uint32_t result_size;        // String: bytes
  uint8_t contexts;            // kHostContext | kGpuContext
};

// Null for an unknown name. resolve_types stores the id on the CallExpr; later stages read it.
const FunctionInfo *find_function(std::string_view name);

// Every function's name, for did-you-mean.
std::vector<std::string> function_names();

// The row of a function id.
const FunctionInfo &function_info(FunctionId id);

ArgRule arg_rule(const FunctionInfo &f, size_t index);

// bpftrace's arity wording: "requires no arguments", "requires one argument",
// "requires at least one argument", "takes up to 2 arguments"; empty if n is accepted.
std::string arity_error(const FunctionInfo &f, size_t n);

} // namespace gpubt::stdlib
