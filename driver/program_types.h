// The types a program needs from outside the script: the traced binaries' debug info (uprobe
// `args->NAME`, `(struct Foo *)arg0` with Foo from DWARF) and the kernel's BTF (records that
// tracepoint fields point at, curtask's task_struct). Gathered before clang reads the script's
// definitions, so that all of them become one set of C types.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "frontend/ast.h"
#include "frontend/c_types.h"
#include "frontend/clang/read_c_definitions.h"

namespace gpubt::driver {

struct ProgramTypes {
  // uprobe attach point name ("uprobe:./app:f") -> the record whose fields are f's parameters.
  std::map<std::string, std::string> uprobe_args;
};

// Fills OPTS' kernel_types, and its debug_info with a writer of the traced binaries' DWARF
// types that names each uprobe's parameter record in TYPES (which must outlive OPTS' use).
void gather_program_types(const frontend::Program &program, int pid,
                          frontend::CDefinitionOptions &opts, ProgramTypes &types);

// args->NAME of a uprobe whose function the debug info describes: its type, and (arg_index)
// which argument register holds it.
std::optional<frontend::Type> uprobe_arg_type(const ProgramTypes &types,
                                              const frontend::CTypes &c_types,
                                              const frontend::AttachPoint &ap,
                                              std::string_view field);
// The error for args->NAME that AP's function does not have; empty when it has it, or when the
// debug info does not describe the function.
std::string uprobe_arg_error(const ProgramTypes &types, const frontend::CTypes &c_types,
                             const frontend::AttachPoint &ap, std::string_view field);
std::optional<uint32_t> uprobe_arg_index(const ProgramTypes &types,
                                         const frontend::CTypes &c_types,
                                         const frontend::AttachPoint &ap, std::string_view field);

} // namespace gpubt::driver
