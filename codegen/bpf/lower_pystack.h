// pystack: the Python frames of the probed thread, read from its CPython interpreter's state with
// the offsets the runtime found for the process (the python_procs map, runtime/abi/python_stack.h).
// BPF takes (code object, instruction pointer) per frame; the runtime names them when it prints.
#pragma once
#include "codegen/bpf/lower_context.h"

namespace gpubt::codegen::bpf {

// Whether PROBE takes pystack or ustack(py) anywhere.
bool probe_takes_python_frames(const frontend::Probe &probe);

// Adds the python_procs map when PROGRAM uses pystack (sets spec.python_procs_map).
void add_python_maps(const frontend::Program &program, layout::MapLayout &layout,
                     abi::ProgramSpec &spec);

// A pystack value of up to FRAMES (<= abi::kPyStackFrames) frames, in scratch memory or INTO
// (abi::pystack_size(32) bytes at least).
Val lower_pystack(LowerCtx &c, uint32_t frames, llvm::Value *into = nullptr);

// A ustack(py) value of type T (frontend::TypeKind::UstackPy): the Python frames, then the
// native return addresses.
Val lower_ustack_py(LowerCtx &c, const frontend::Type &t);

} // namespace gpubt::codegen::bpf
