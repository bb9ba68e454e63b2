// Names pystack frames (runtime/abi/python_stack.h) as `file:line function`, reading each code
// object from the traced process (its file and function names and line table, cached per code
// object) and the line from the frame's instruction as CPython's PyCode_Addr2Line does.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/abi/python_stack.h"

namespace gpubt::runtime {

// The lines of one pystack value: its frames innermost first, shims left out. Empty when the
// process's interpreter is unknown (a warning says why, once per process).
std::vector<std::string> python_frame_lines(const abi::PyStackHeader &header,
                                            std::span<const abi::PyStackFrame> frames);

// Reads and caches the code objects of FRAMES now, while PID is alive (a process held before
// its interpreter finalizes), so that they still print after it exits.
void remember_python_frames(int pid, std::span<const abi::PyStackFrame> frames);

// CPython's address -> line mapping of a 3.11+ co_linetable: the line of the instruction at
// byte offset ADDR, or -1 where the table says the instruction has none.
int python_line_of(const std::string &linetable, int first_line, int addr);

} // namespace gpubt::runtime
