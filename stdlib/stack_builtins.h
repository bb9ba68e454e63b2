// The stack builtins' arguments, bpftrace's spelling: ustack(MODE, N), ustack(N), kstack(N),
// pystack(N). Modes: `bpftrace` (the default) and, for ustack, `py`: the native frames with the
// Python frames of the thread's interpreter in place of its eval loop's frames.
//
// Why `py`: bpftrace's modes (`bpftrace`, `perf`, `raw`) name how a stack prints; this one adds
// what pystack reads, so it is named after pystack's prefix (py-spy's `--native` does the same
// splice). `perf` and `raw` are not read (an error says so).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/builtin_ids.h"
#include "frontend/types.h"

namespace gpubt::stdlib {

using frontend::BuiltinId;

// Whether ID takes stack arguments (ustack, kstack, pystack).
bool is_stack_builtin(BuiltinId id);

// An error for MODE given to ID ("" when ID reads it).
std::string stack_mode_error(BuiltinId id, std::string_view mode);

// The frame counts ID (in Python mode or not) takes: 1 to this.
uint32_t max_stack_frames(BuiltinId id, bool python);

// The value's type: FRAMES (0: the builtin's default) native return addresses (UStack, KStack),
// Python frames (PyStack), or for ustack(py) a UstackPy of {PyStack, UStack}.
frontend::Type stack_type(BuiltinId id, bool python, uint32_t frames);

} // namespace gpubt::stdlib
