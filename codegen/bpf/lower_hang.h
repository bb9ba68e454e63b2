// gpu:hang probes' builtins and args (runtime/abi/hang_ctx.h): read from the context gpubt
// hands the program when a launch has run too long, not from the current task.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// args.NAME's type in a gpu:hang probe (none for another probe or an unknown field), and the
// message for an unknown one ("" where it is known or the probe is not a gpu:hang).
std::optional<frontend::Type> hang_arg_type(const frontend::AttachPoint &ap, std::string_view field);
std::string hang_arg_error(const frontend::AttachPoint &ap, std::string_view field);

// A builtin the launch answers (pid, kernel, launch_start, gdim_*, bdim_*; in a launch-level
// gpu:kretprobe also nsecs, its end, and last_thread, 1); none for the others (gpu:hang's nsecs,
// probe), which lower as in any host probe.
std::optional<Val> lower_hang_builtin(LowerCtx &c, const frontend::BuiltinExpr &e);
Val lower_hang_arg(LowerCtx &c, const frontend::FieldExpr &e);

} // namespace gpubt::codegen::bpf
