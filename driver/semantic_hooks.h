// The semantic passes' lookups into the system being traced: what args.NAME, retval and argN are
// (tracepoint formats, the GPU API catalog, the traced binary's DWARF) and the addresses of
// uaddr()/kaddr() symbols (ELF symbol tables, /proc/kallsyms).
#pragma once
#include <ostream>

#include "driver/options.h"
#include "driver/program_types.h"
#include "frontend/c_types.h"
#include "frontend/passes/resolve_types.h"

namespace gpubt::driver {

// The options resolve_types and check_types run with. The hooks keep references to every
// argument, which must outlive the options; ERR gets --dry-run's warning for a kernel symbol
// that is not there.
frontend::SemanticOptions make_semantic_options(const Options &options,
                                                const ProgramTypes &program_types,
                                                const frontend::CTypes &c_types, std::ostream &err);

} // namespace gpubt::driver
