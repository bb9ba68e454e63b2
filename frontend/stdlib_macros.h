// gpubt's stdlib of macros (bpftrace head's `assert`, `ppid`), a source file of its own that
// every script can call into and that diagnostics point into.
#pragma once
#include <cstdint>

#include "frontend/source.h"

namespace gpubt::frontend {

// SourceSpan::file of a span in stdlib_macros(); 0 is the script's.
constexpr uint8_t kStdlibFile = 1;

// "stdlib/base.bt", as bpftrace names its file.
const SourceFile &stdlib_macros();

} // namespace gpubt::frontend
