// Register names reg() accepts and where each lives in the x86-64 kernel's struct pt_regs.
#pragma once
#include <optional>
#include <string_view>

namespace gpubt::stdlib {

// Byte offset of register `name` ("sp", "ip", "di", "r8", ...) in pt_regs, if it is one.
std::optional<unsigned> pt_regs_offset(std::string_view name);

} // namespace gpubt::stdlib
