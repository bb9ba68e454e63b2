// The struct and union names a script uses and defines: what the kernel's BTF or a binary's
// debug info must supply is what it uses and does not define.
#pragma once
#include <set>
#include <string>

#include "frontend/ast.h"

namespace gpubt::frontend {

// The struct/union names ("struct Foo") a script uses in casts, sizeof and its definitions.
std::set<std::string> used_records(const Program &program);
// The struct/union names the script's definitions define (with a body).
std::set<std::string> defined_records(const Program &program);

} // namespace gpubt::frontend
