// Finds a process's CPython interpreter for pystack: the ELF file defining _PyRuntime (a python
// executable or libpython), its version, where _PyRuntime sits in the process, and the offsets
// the BPF walk and the frame printer need (3.13+: from _PyRuntime's own _Py_DebugOffsets; 3.11
// and 3.12: from tables here; 3.10 too, its frames PyFrameObjects).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/abi/python_stack.h"
#include "runtime/abi/result.h"

namespace gpubt::runtime {

// What the printer reads beyond abi::PythonProcess: code objects and their strings.
struct PythonObjectLayout {
  uint32_t code_filename, code_name, code_linetable, code_firstlineno, code_adaptive;
  uint32_t bytes_size = 16, bytes_data = 32;  // PyBytesObject ob_size, ob_sval
  uint32_t unicode_state = 32, unicode_length = 16;
  uint32_t ascii_size, compact_size;          // where compact strings' characters start
  uint32_t object_type = 8;                   // PyObject.ob_type
};

struct PythonInterpreter {
  int major = 0, minor = 0;
  std::string path;           // the ELF file that defines _PyRuntime
  abi::PythonProcess process; // what the BPF walk reads (runtime: the address in the process)
  PythonObjectLayout objects;
  uint64_t code_type = 0;     // &PyCode_Type in the process
  // 3.10: frames are PyFrameObjects, each its own eval loop call; their instr is f_lasti (an
  // instruction index) and co_linetable is PEP 626's (byte delta, line delta) pairs.
  bool frame_objects = false;
};

// The interpreter of process PID, found through its mappings. Errors say why not, for a warning:
// no CPython mapped, a version pystack does not read, a file without the symbols.
Result<PythonInterpreter> find_python(int pid);

// The interpreter in the ELF file PATH, from the file alone (no process): _PyRuntime's address
// is the file's. Errors as find_python's.
Result<PythonInterpreter> read_python_file(const std::string &path);

// Whether PATH is a CPython interpreter (python* or libpython* defining _PyRuntime or
// Py_Initialize): a python executable or libpython.
bool defines_python_runtime(const std::string &path);

// Whether find_python's error WHY says only that the process runs no CPython (or is gone): no
// warning is due for that.
bool python_absent(const std::string &why);

// Prints "WARNING: pystack: WHY; Python frames are left out" once per WHY (none where
// python_absent(WHY)).
void warn_python(const std::string &why);

// Interpreters found, by pid, for the printer: find_python's answer (or its error) is kept.
const Result<PythonInterpreter> &python_of(int pid);

} // namespace gpubt::runtime
