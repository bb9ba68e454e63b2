// The Python frames a process is running now, read from outside it as the pystack probe reads
// them (runtime/abi/python_stack.h): for a process traced with -p, whose code objects may be
// freed before the maps print (the main module's, once it has run), gpubt reads them at attach.
#pragma once
#include <vector>

#include "runtime/abi/python_stack.h"
#include "runtime/process/python_interp.h"

namespace gpubt::runtime {

// Every thread's frames in every interpreter of PID, innermost first thread by thread, in
// pystack's form (code | owner << kPyOwnerShift; instr left 0). Bounded: 16 interpreters, 256
// threads each, 1024 frames a thread. Empty where the memory cannot be read.
std::vector<abi::PyStackFrame> python_frames_now(int pid, const PythonInterpreter &py);

} // namespace gpubt::runtime
