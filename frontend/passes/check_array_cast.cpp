// The rules of bpftrace head's type checker for casts to arrays, with its messages.
#include "frontend/passes/check_array_cast.h"

#include "frontend/passes/resolve_types.h"

namespace gpubt::frontend {

std::optional<std::string> array_cast_error(const CastExpr &c, const CTypes *c_types) {
  const Type &from = c.operand->type;
  if (from.is_none())
    return std::nullopt; // the operand's own error is reported
  Type elem = spec_element_type(c.to, c_types);
  if (elem.is_none())
    return std::nullopt; // an unknown type name, reported where resolve_types could not name it
  if (elem.kind != TypeKind::Integer)
    return "Cannot cast to an array of \"" + to_string(elem) +
           "\": arrays are of integer or bool elements";
  if (*c.to.array_count == 0 && from.size % elem.size)
    return std::string("Cannot determine array size: the element size is incompatible with the "
                       "cast integer size");
  const Type &to = c.type;
  bool widens = from.is_integer_like() && to.size <= 8 && to.size > from.size;
  bool same_bytes =
      (from.is_integer_like() || from.kind == TypeKind::String) && to.size == from.size;
  if (!widens && !same_bytes)
    return "Cannot cast from \"" + to_string(from) + "\" to \"" + to_string(to) + "\"";
  return std::nullopt;
}

} // namespace gpubt::frontend
