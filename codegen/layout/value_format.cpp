// Format specs of printed values (value_format.h).
#include "codegen/layout/value_format.h"

#include "codegen/layout/value_type.h"

namespace gpubt::codegen::layout {

abi::FormatSpec value_format(std::string format, const std::vector<const frontend::Expr *> &args,
                             uint32_t *payload_size) {
  abi::FormatSpec fs;
  fs.format = std::move(format);
  uint32_t off = 0;
  for (const frontend::Expr *a : args) {
    abi::FormatArg fa;
    fa.type = to_value_type(a->type);
    if (fa.type.size == 0)
      fa.type.size = 8;
    fa.offset = off;
    off += (fa.type.size + 7) / 8 * 8;
    fs.args.push_back(fa);
  }
  *payload_size = off;
  return fs;
}

} // namespace gpubt::codegen::layout
