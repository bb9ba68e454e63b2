// The table of builtin identifiers (pid, comm, arg0, tid_x, ...): result type, the probe
// kinds that allow each, and the id codegen lowers. Checker and codegen both read it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "frontend/types.h"

namespace gpubt::stdlib {

using frontend::BuiltinId;

// One bit per frontend::Provider.
using ProviderMask = uint32_t;
constexpr ProviderMask provider_bit(frontend::Provider p) { return 1u << static_cast<int>(p); }

// How a builtin's value varies within one gpu launch.
enum class Variation : uint8_t {
  PerThread, // fixed for a thread, may differ between threads (tid_x, lane, sm, ...)
  PerLaunch, // the same in every thread of a launch: a map key of these is launch-uniform
  OverTime,  // may differ between a thread's entry and its exit: a gpu:kretprobe reading it
             // cannot run at the kernel's entry instead
};

struct BuiltinInfo {
  std::string_view name; // "arg" stands for arg0..arg9
  BuiltinId id;
  frontend::TypeKind kind; // Integer, String, UserSym, Probe, ... (None: typed by context)
  uint32_t size;           // bytes
  bool is_signed;
  ProviderMask allowed;
  // Message when used in a probe it does not allow; {name} and {probe} (bpftrace's probe
  // type name, e.g. 'BEGIN', 'uprobe') are substituted.
  std::string_view misuse;
  Variation variation = Variation::PerThread;
};

// A builtin name as used in a script: its row and, for argN, N.
struct BuiltinUse {
  const BuiltinInfo *info = nullptr;
  int arg_index = -1;
};

// Looks up "pid", "arg3", "tid_x"; info is null for an unknown name. resolve_types stores what
// it finds on the BuiltinExpr; later stages read the id.
BuiltinUse find_builtin(std::string_view name);

// Every builtin's name ("arg0".."arg9" for argN), for did-you-mean.
std::vector<std::string> builtin_names();

// The builtin for a CUDA spelling in a gpu probe ("threadIdx.x" -> "tid_x", "gridDim.z" ->
// "gdim_z"); empty when BASE.FIELD is no such spelling.
std::string builtin_for_cuda_spelling(std::string_view base, std::string_view field);

// The row of a builtin id.
const BuiltinInfo &builtin_info(BuiltinId id);

// The resolved type of a builtin (size/signedness from the table).
frontend::Type builtin_type(const BuiltinInfo &info);

bool builtin_allowed(const BuiltinInfo &info, frontend::Provider p);

// The misuse message for `name` in a probe of provider p.
std::string builtin_misuse_message(const BuiltinInfo &info, std::string_view name,
                                   frontend::Provider p);

// bpftrace's name for a probe type in messages: "BEGIN", "uprobe", "gpu:kprobe", ...
std::string_view provider_type_name(frontend::Provider p);

// bpftrace's ProbeType names: the `probetype` builtin and the args message ("special" for
// BEGIN/END).
std::string_view probe_type_name(frontend::Provider p);

} // namespace gpubt::stdlib
