#include "frontend/passes/builtin_at_point.h"

#include "stdlib/builtins.h"

namespace gpubt::frontend {

std::optional<std::string> builtin_error_at(const BuiltinExpr &b, const AttachPoint &ap,
                                            const SemanticOptions &options) {
  const stdlib::BuiltinInfo &info = stdlib::builtin_info(*b.id);
  // gpubt saves a catalogued API function's arguments at entry for its uretprobes; such
  // functions are exactly those with a typed return value.
  bool saved_args = *b.id == stdlib::BuiltinId::Args && ap.provider == Provider::Uretprobe &&
                    options.retval_type && options.retval_type(ap);
  if (!saved_args && !stdlib::builtin_allowed(info, ap.provider))
    return stdlib::builtin_misuse_message(info, b.name, ap.provider);
  // A probe narrowed to global or local memory never sees a shared access.
  if (*b.id == stdlib::BuiltinId::BankConflicts && ap.provider == Provider::GpuMemory &&
      (ap.ns == "global" || ap.ns == "local"))
    return "bank_conflicts counts shared-memory requests: " + ap.name() + " only sees " + ap.ns +
           " ones (gpu:" + ap.target + ":shared:KERNEL, or gpu:" + ap.target +
           ":KERNEL where it reads 0 outside shared memory)";
  if (*b.id == stdlib::BuiltinId::Arg && options.argn_error)
    if (std::string msg = options.argn_error(ap, b.arg_index); !msg.empty())
      return msg;
  return std::nullopt;
}

} // namespace gpubt::frontend
