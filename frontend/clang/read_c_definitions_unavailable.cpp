// read_c_definitions for a gpubt built without libclang (GPUBT_STATIC_LLVM: the self-contained
// build carried to GPU machines, where libclang would bring all of libLLVM with it): scripts
// without C definitions compile as ever, one with them gets an error saying why.
#include "frontend/clang/read_c_definitions.h"

namespace gpubt::frontend {

CTypes read_c_definitions(const Program &program, const SourceFile &, Diagnostics &diags,
                          const CDefinitionOptions &options) {
  if (!program.c_definitions.empty())
    diags.error(program.c_definitions.front().span,
                "C definitions need libclang, which this gpubt was built without (the "
                "self-contained GPUBT_STATIC_LLVM build): use a gpubt built with libclang-22");
  else if (!options.includes.empty())
    diags.error(program.span, "--include needs libclang, which this gpubt was built without");
  return {};
}

} // namespace gpubt::frontend
