// The API catalog seen from scripts: which catalogued function an attach point probes, and the
// frontend types of its `args.NAME` and `retval`. The driver hands these to the semantic passes.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "frontend/types.h"
#include "stdlib/api_catalog.h"

namespace gpubt::stdlib {

// The library a probe target names: the aliases `cudart`, `cuda`, `hip`; nullopt for a path.
std::optional<ApiLibrary> library_of_alias(std::string_view target);

// The catalogued function of a uprobe/uretprobe: TARGET an alias (restricted to its library) or
// any path, FUNC a catalogued name ("cuMemAlloc") or one of its symbols ("cuMemAlloc_v2").
const ApiFunction *api_function_for(const frontend::AttachPoint &ap);

// Pointers, handles and strings are uint64, integers keep size and sign, enums are Enum (printed
// by name), a dim3 is a tuple (uint32, uint32, uint32): args.gridDim.0 is x.
frontend::Type api_param_type(const ApiParam &p);

// SemanticOptions hooks: args.NAME types, retval's enum, the unknown-argument message.
std::optional<frontend::Type> api_arg_type(const frontend::AttachPoint &ap, std::string_view field);
std::optional<frontend::Type> api_retval_type(const frontend::AttachPoint &ap);
std::string api_arg_error(const frontend::AttachPoint &ap, std::string_view field);
// `argN` past a catalogued function's arguments in its uprobe (they read whatever the register or
// stack slot holds): "cudaMalloc has 2 arguments in arg0..arg1 (devPtr, size); arg9 is past them";
// empty otherwise.
std::string api_argn_error(const frontend::AttachPoint &ap, int index);

// -lv's lines under a uprobe/uretprobe of a catalogued function, as bpftrace lists a function's
// DWARF parameters: "TYPE NAME" per argument (an enum by its enum's name, a pointer spelt as
// DWARF's "void*"), then under a uretprobe "RET retval"; empty when AP probes none.
std::vector<std::string> api_listing_lines(const frontend::AttachPoint &ap);

} // namespace gpubt::stdlib
