// The stack builtins' arguments (see stack_builtins.h).
#include "stdlib/stack_builtins.h"

#include "runtime/abi/python_stack.h"

namespace gpubt::stdlib {
namespace {

using frontend::Type;
using frontend::TypeKind;

constexpr uint32_t kNativeFrames = 32; // ustack and kstack: bpftrace's 127 would not fit a key
// ustack(py): 16 native and 23 Python frames, or N of each: 8 + 16 * 23 + 8 * 16 = 504 bytes,
// and a map key must fit 512 (a hash map's key limit).
constexpr uint32_t kMixedNative = 16, kMixedPython = 23, kMixedMax = 20;

Type stack_of(TypeKind kind, uint32_t size) {
  Type t;
  t.kind = kind;
  t.size = size;
  return t;
}

} // namespace

bool is_stack_builtin(BuiltinId id) {
  return id == BuiltinId::Ustack || id == BuiltinId::Kstack || id == BuiltinId::Pystack;
}

std::string stack_mode_error(BuiltinId id, std::string_view mode) {
  if (mode == "bpftrace" && id != BuiltinId::Pystack)
    return "";
  if (mode == "py" && id == BuiltinId::Ustack)
    return "";
  std::string name = id == BuiltinId::Ustack ? "ustack" : id == BuiltinId::Kstack ? "kstack" : "pystack";
  if (id == BuiltinId::Pystack)
    return "pystack takes no mode, only a frame count: pystack(8)";
  return "Unknown " + name + " mode '" + std::string(mode) + "': " + name + " reads " +
         (id == BuiltinId::Ustack ? "'bpftrace' (the default) and 'py' (Python frames in place "
                                    "of the interpreter's)"
                                  : "'bpftrace' only");
}

uint32_t max_stack_frames(BuiltinId id, bool python) {
  if (id == BuiltinId::Pystack)
    return abi::kPyStackFrames;
  return python ? kMixedMax : kNativeFrames;
}

Type stack_type(BuiltinId id, bool python, uint32_t frames) {
  if (id == BuiltinId::Pystack)
    return stack_of(TypeKind::PyStack, abi::pystack_size(frames ? frames : abi::kPyStackFrames));
  TypeKind kind = id == BuiltinId::Kstack ? TypeKind::KStack : TypeKind::UStack;
  if (!python)
    return stack_of(kind, 8 * (frames ? frames : kNativeFrames));
  Type py = stack_of(TypeKind::PyStack, abi::pystack_size(frames ? frames : kMixedPython));
  Type native = stack_of(TypeKind::UStack, 8 * (frames ? frames : kMixedNative));
  Type t = stack_of(TypeKind::UstackPy, py.size + native.size);
  t.elems = {py, native};
  return t;
}

} // namespace gpubt::stdlib
