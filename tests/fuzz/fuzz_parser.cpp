// libFuzzer target: parse_program on arbitrary bytes must return (a program or errors), never
// crash, throw, or hang; a returned program must also dump.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "frontend/ast_dump.h"
#include "frontend/parse/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace gpubt::frontend;
  SourceFile file("stdin", std::string(reinterpret_cast<const char *>(data), size));
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  if (!prog && !diags.has_errors())
    abort(); // null without a reason
  if (prog && diags.has_errors())
    abort(); // a program despite errors
  if (prog)
    dump_ast(*prog);
  diags.render(file);
  return 0;
}
