// Textual inlining of a PTX .func at a call site: ptxas keeps a call to a module's .func a real
// CALL (on the H100 a called exit probe made a 2^26-thread vectorAdd 1.26x slower where the
// same counting written in the kernel cost 1.01x), so the instrumenter pastes the probe's body.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime::ptx {

struct InlineFunction {
  std::string body;                // between the braces, registers and labels renamed "@@"
  std::vector<std::string> params; // parameter names, in order
  std::string retval;              // the return parameter's name, or empty
};

// FUNCTION is one whole `.func` (prototype and body). Errors: not a function with a body.
Result<InlineFunction> prepare_inline(std::string_view function);

// The body as a block for a call site: parameter K reads ARGS[K] (a register or an immediate),
// `ret` leaves the block, registers and labels get PREFIX (unique per site), and the block is
// skipped unless PREDICATE ("@%p1", "@!%p2") holds when one is given.
std::string inline_call(const InlineFunction &f, const std::vector<std::string> &args,
                        const std::string &prefix, const std::string &predicate);

// Each `%name` or `%name<N>` of a `.reg` statement, with N (0 when absent).
std::vector<std::pair<std::string, int>> declared_registers(std::string_view reg_statement);

// "@%p1" -> "@!%p1", "@!%p2" -> "@%p2".
std::string negate_predicate(const std::string &predicate);

} // namespace gpubt::runtime::ptx
