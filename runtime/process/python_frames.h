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

// The lines of one pystack value, innermost first, shims left out, by eval loop call: one group
// per call of the interpreter's eval loop (_PyEval_EvalFrameDefault), as 3.11's is_entry and
// 3.12's shim frames mark them (3.10: a group per frame). Empty when the process's interpreter
// is unknown (a warning says why, once per process).
std::vector<std::vector<std::string>> python_frame_groups(const abi::PyStackHeader &header,
                                                          std::span<const abi::PyStackFrame> frames);

// ustack(py)'s lines: the NATIVE frames' names (innermost first) with each eval loop frame
// replaced by the next group of GROUPS; groups left over (the native unwinding stopped short:
// CPython and most wheels are built without frame pointers) follow the native frames.
std::vector<std::string> splice_python_frames(const std::vector<std::string> &native,
                                              const std::vector<std::vector<std::string>> &groups);

// Reads and caches the code objects of FRAMES now, while PID is alive (a process held before
// its interpreter finalizes), so that they still print after it exits.
void remember_python_frames(int pid, std::span<const abi::PyStackFrame> frames);

// CPython's address -> line mapping of a 3.11+ co_linetable: the line of the instruction at
// byte offset ADDR, or -1 where the table says the instruction has none.
int python_line_of(const std::string &linetable, int first_line, int addr);

// The same for 3.10's co_linetable (PEP 626: pairs of an unsigned byte delta and a signed line
// delta, -128 for no line), as 3.10's PyCode_Addr2Line reads it.
int python310_line_of(const std::string &linetable, int first_line, int addr);

} // namespace gpubt::runtime
