// What the pystack lowering (codegen/bpf/lower_pystack.cpp) and the runtime share: the record the
// runtime writes for each process whose CPython interpreter it found (the python_procs map, key:
// the u32 pid), and the bytes of a pystack value.
#pragma once
#include <cstdint>

namespace gpubt::abi {

// A pystack value: a PyStackHeader, then up to kPyStackFrames PyStackFrames, innermost first.
// 8 + 16 * 31 = 504 bytes: a map key must fit the 512-byte BPF stack of older kernels.
constexpr uint32_t kPyStackFrames = 31;
constexpr uint32_t pystack_size(uint32_t frames) { return 8 + 16 * frames; }

struct PyStackHeader {
  uint32_t pid;    // the process whose memory the code objects are in
  uint32_t status; // frames taken (low 16 bits) | PyStackStatus bits
};

enum PyStackStatus : uint32_t {
  kPyStackNoInterpreter = 1u << 31, // no interpreter known for the pid (or it was unreadable)
  kPyStackNoThread = 1u << 30,      // the interpreter lists no thread state for this thread
  kPyStackTruncated = 1u << 29,     // more frames than the value holds (outermost left out)
};

// The code word's top byte is the frame's owner (_PyInterpreterFrame.owner): the runtime skips
// C-stack shims (PythonProcess::owner_cstack) and frames without code. Bit 55: 3.11's is_entry
// (the frame an eval loop call started with: ustack(py) splices by it).
constexpr uint64_t kPyCodeMask = (1ull << 55) - 1;
constexpr uint32_t kPyOwnerShift = 56, kPyEntryShift = 55;

struct PyStackFrame {
  uint64_t code;  // the frame's code object | owner << kPyOwnerShift
  uint64_t instr; // its instruction pointer (3.11/3.12 prev_instr, 3.13 instr_ptr; 3.10 f_lasti)
};

constexpr uint32_t kPyNoOffset = 0xffffffffu;

// The lowering reads a frame's first kPyFrameBytes in one go where frame_bytes does not say
// more (3.10's f_lasti lies at 96): every frame field lies there.
constexpr uint32_t kPyFrameBytes = 72, kPyMaxFrameBytes = 120;

// The python_procs map's value. Offsets are in bytes; the lowering reads them at these offsets.
struct PythonProcess {
  uint64_t runtime;           // &_PyRuntime in the process
  uint32_t interpreters_head; // _PyRuntimeState.interpreters.head
  uint32_t threads_head;      // PyInterpreterState.threads.head
  uint32_t thread_next;       // PyThreadState.next
  uint32_t native_thread_id;  // PyThreadState.native_thread_id (the thread's tid)
  uint32_t cframe;            // PyThreadState.cframe (3.11, 3.12); kPyNoOffset from 3.13 on
  uint32_t current_frame;     // _PyCFrame.current_frame, or PyThreadState.current_frame (3.13)
  uint32_t frame_code;        // _PyInterpreterFrame.f_code (f_executable in 3.13; 3.10: the
                              // PyFrameObject's f_code, previous its f_back)
  uint32_t frame_previous;    // _PyInterpreterFrame.previous
  uint32_t frame_instr;       // _PyInterpreterFrame.prev_instr (instr_ptr in 3.13)
  uint32_t frame_owner;       // _PyInterpreterFrame.owner (one byte)
  uint32_t owner_cstack;      // the owner of C-stack shim frames, skipped; kPyNoOffset: none
  uint32_t frame_is_entry;    // 3.11's _PyInterpreterFrame.is_entry (one byte); later versions
                              // mark an eval loop's first frame by a shim below it instead
  // 3.10: PyThreadState.thread_id (native_thread_id's offset) is a pthread_t, the address of
  // glibc's struct pthread, whose tid lies this far in; kPyNoOffset: native_thread_id is the tid.
  uint32_t pthread_tid = kPyNoOffset;
  uint32_t frame_bytes = kPyFrameBytes; // a frame's bytes read (kPyMaxFrameBytes at most)
  uint32_t frame_instr_size = 8;        // bytes of frame_instr (3.10's f_lasti: an int, 4)
  uint32_t interpreter_next = 0;        // PyInterpreterState.next (the interpreter before it)
};
static_assert(sizeof(PythonProcess) == 72);

} // namespace gpubt::abi
