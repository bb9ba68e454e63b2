// Gives every expression its type (Expr::type), every @map one key and one value type, and
// every $variable its type per probe, the way bpftrace 0.17 does. Reports nothing: errors are
// check_types' job, which reads what this pass leaves.
#pragma once
#include <functional>
#include <optional>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/c_types.h"
#include "frontend/passes/semantic_info.h"

namespace gpubt::frontend {

// Types `args.NAME` for an attach point (tracepoint formats, the CUDA API catalog):
// std::nullopt when the field is unknown there.
using FieldResolver =
    std::function<std::optional<Type>(const AttachPoint &ap, std::string_view field)>;
// Types `retval` in a uretprobe (a catalogued API function's return enum); nullopt: default.
using RetvalResolver = std::function<std::optional<Type>(const AttachPoint &ap)>;
// The error for an unknown `args.NAME` ("cudaMalloc has no argument 'bytes'; its arguments
// are: devPtr, size"); empty when the attach point has no known fields to check against.
using FieldErrorFn = std::function<std::string(const AttachPoint &ap, std::string_view field)>;
// The error for `argN` past a known function's arguments; empty when fine or not known.
using ArgIndexErrorFn = std::function<std::string(const AttachPoint &ap, int index)>;

// A symbol's address and size (0: unknown), for uaddr() and kaddr().
struct SymbolInfo {
  uint64_t address = 0, size = 0;
};
// uaddr("NAME") in a probe on BINARY (its first attach point's target); kaddr("NAME").
using UserSymbolFn =
    std::function<std::optional<SymbolInfo>(const std::string &binary, const std::string &name)>;
using KernelSymbolFn = std::function<std::optional<SymbolInfo>(const std::string &name)>;
// The BTF id of the kernel's per-CPU variable NAME, for percpu_kaddr("NAME").
using PercpuVarFn = std::function<std::optional<uint32_t>(const std::string &name)>;

// A field of config() / __builtin_config: an option as this run has it.
struct ConfigField {
  enum class Kind { Bool, Int, String };
  std::string name;
  Kind kind = Kind::Int;
  uint64_t number = 0; // Bool, Int
  std::string text;    // String
};

struct SemanticOptions {
  bool has_child = false;      // -c CMD given: cpid is usable
  uint32_t strlen = 64;        // BPFTRACE_STRLEN: the size of str()'s result
  bool unsafe = false;         // --unsafe: system() is allowed
  FieldResolver field_type;    // may be empty: args fields stay TypeKind::None
  RetvalResolver retval_type;  // may be empty: retval is uint64
  FieldErrorFn field_error;    // may be empty: unknown args fields are not reported
  ArgIndexErrorFn argn_error;  // may be empty: any arg0..arg9 is accepted
  const CTypes *c_types = nullptr; // the script's C definitions (struct types, constants)
  UserSymbolFn user_symbol;     // may be empty: every uaddr() fails
  KernelSymbolFn kernel_symbol; // may be empty: every kaddr() fails
  PercpuVarFn percpu_var;       // may be empty: every percpu_kaddr() fails
  // bpftrace head's types (GPUBT_OUTPUT_STYLE=head): comparisons and && || are bools (1 byte,
  // printed true/false); an integer literal is the smallest signed integer that holds it (`1`
  // an int8), and a variable or tuple element grows to the widest integer assigned, `$x++` to
  // 64 bits. 0.17 typed them all int64 (comparisons printed 1/0).
  bool head_types = false;
  std::vector<ConfigField> config; // config()'s record, in bpftrace head's order
};

// Conventions (what codegen relies on):
// - integer literals, arithmetic, comparisons: 64-bit; signed only if both operands are;
// - map values and map key integers are widened to 64 bits, keeping signedness of the first
//   assignment; $variables and tuple elements keep the integer's own size;
// - a map or variable assigned strings of several sizes gets the largest (also inside tuples);
// - a multi-key map's key is a Tuple of the (widened) key types; one tuple as the key,
//   `@m[$t]` or `delete(@m, (1, "a"))`, is the whole key (bpftrace's keys are tuples since 0.21);
// - bools (`true`, `(bool)x`, has_key(), delete()) are a uint8 printed true/false.
SemanticInfo resolve_types(Program &program, const SemanticOptions &options = {});

// Whether the map access's one key is a tuple that is the whole key of a multi-key map.
bool is_whole_key(const MapExpr &m);

// The string literal a call's first argument names: "sym", or str("sym") (what a positional
// parameter used as a string becomes); null if it is not a literal.
const std::string *call_literal_text(const CallExpr &c);

// The type an integer cast names ("uint8", "int64"); none for an unknown name.
Type cast_type(std::string_view type_name);

// The type a cast or sizeof names: an integer name, else a C type of the definitions (records
// complete), with `pointer_depth` `*`s; none if unknown.
Type named_type(const std::string &type_name, int pointer_depth, const CTypes *c_types);

// The type SPEC names (a resolved typeof's expression's, else named_type()'s), with its `*`s and
// `[N]`; `[]` holds as many elements as OPERAND_SIZE bytes fill (none if they do not divide).
Type spec_type(const TypeSpec &spec, const CTypes *c_types, uint32_t operand_size = 0);
// The type SPEC names without its `[N]`: an array's element.
Type spec_element_type(const TypeSpec &spec, const CTypes *c_types);

// Whether a cast to SPEC, typed T, is to an array of integers or bools written `T[N]`.
bool is_integer_array_cast(const TypeSpec &spec, const Type &t);

} // namespace gpubt::frontend
