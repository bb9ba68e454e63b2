// pystack's side of a session: the python_procs map (abi::PythonProcess per pid) filled for the
// traced processes, and the stops that make it exact for a -c child: before its interpreter
// initializes (the map has it before the first Python frame runs) and before it finalizes (code
// objects the maps hold are read while they still exist); for -p, the latter.
#pragma once
#include <string>
#include <vector>

#include "runtime/abi/map_data.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"

namespace gpubt::runtime {

// Finds PID's interpreter and writes it into the python_procs map PROCS_FD. Errors say why
// (python_absent() tells those that need no warning).
Status register_python(int procs_fd, int pid);

// register_python() for every running process with a CPython interpreter (probes without -p/-c).
void register_running_pythons(int procs_fd);

// Stops at the entry of Py_InitializeFromConfig and Py_FinalizeEx, and after the outermost
// PyEval_EvalCode returns (before the module code it ran is freed), of the interpreter EXE runs
// (EXE itself, or the libpython it links), in process PID (exit_hold.h's stop); RUNNING (-p: an
// interpreter already started): at Py_FinalizeEx alone. Error: EXE has no CPython interpreter.
Result<std::vector<UniqueFd>> hold_at_python(int pid, const std::string &exe, bool running);

// Reads the code objects that the pystack values in MAPS (specs and live contents) refer to, so
// they print after the process is gone.
void remember_python_frames_in(const std::vector<abi::MapSpec> &specs,
                               const std::vector<MapData> &maps);

} // namespace gpubt::runtime
