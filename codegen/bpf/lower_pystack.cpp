// pystack in BPF (see lower_pystack.h). The walk, as CPython's own debuggers do it: _PyRuntime ->
// the newest interpreter (then the main one) -> its thread states, the one whose native_thread_id
// is this thread (the GIL's holder is not enough: ctypes and PyTorch release it around native
// calls) -> its current
// _PyInterpreterFrame -> previous ..., skipping the C-stack shim frames of 3.12+ (3.10: its
// PyFrameObject -> f_back ..., the thread found through its pthread_t). Loops are
// bounded for the verifier; a read that faults reads as 0 and ends the walk.
#include "codegen/bpf/lower_pystack.h"

#include <linux/bpf.h>

#include <algorithm>
#include <cstddef>

#include "codegen/bpf/ir_helpers.h"
#include "frontend/ast_walk.h"
#include "runtime/abi/python_stack.h"

namespace gpubt::codegen::bpf {

using namespace frontend;

namespace {

constexpr uint32_t kMaxThreads = 64;    // thread states searched, in each of two interpreters
constexpr uint32_t kFrameSlot = 136;    // a frame's bytes read into a slot masked offsets stay in
constexpr uint32_t kProcessEntries = 4096;

bool program_uses_pystack(const Program &program) {
  for (const auto &p : program.probes)
    if (probe_takes_python_frames(*p))
      return true;
  return false;
}

// *(u64 *)ADDR in the traced process; 0 where it cannot be read.
llvm::Value *read_word(LowerCtx &c, llvm::Value *slot, llvm::Value *addr) {
  call_helper(c, BPF_FUNC_probe_read_user,
              {slot, c.b.getInt32(8), c.b.CreateIntToPtr(addr, c.b.getPtrTy())});
  return c.b.CreateAlignedLoad(c.b.getInt64Ty(), slot, llvm::Align(8));
}

// A field offset of the process record, as i64.
llvm::Value *offset_of(LowerCtx &c, llvm::Value *info, size_t field) {
  auto *v = c.b.CreateAlignedLoad(c.b.getInt32Ty(), byte_ptr(c, info, uint32_t(field)),
                                  llvm::Align(4));
  return c.b.CreateZExt(v, c.b.getInt64Ty());
}

// A load from the frame slot at a field offset masked into it (the verifier needs the bound).
llvm::Value *frame_field(LowerCtx &c, llvm::Value *slot, llvm::Value *off, llvm::Type *ty) {
  auto *masked = c.b.CreateAnd(off, c.b.getInt64(127));
  auto *p = c.b.CreateInBoundsGEP(c.b.getInt8Ty(), slot, masked);
  auto align = llvm::Align(ty->getIntegerBitWidth() / 8); // CPython's fields are aligned
  return c.b.CreateZExt(c.b.CreateAlignedLoad(ty, p, align), c.b.getInt64Ty());
}

llvm::BasicBlock *block(LowerCtx &c, const char *name) {
  return llvm::BasicBlock::Create(c.ctx, name, c.fn);
}

void store_status(LowerCtx &c, llvm::Value *buf, llvm::Value *status) {
  c.b.CreateAlignedStore(c.b.CreateTrunc(status, c.b.getInt32Ty()), byte_ptr(c, buf, 4),
                         llvm::Align(4));
}

// A walk along a linked list (thread states, frames), bounded for the verifier: the round
// INDEX (from 0) and the NODE it is at (from the first; 0 ends the walk).
struct ChainWalk {
  llvm::PHINode *index, *node;
};

// Opens the walk from FIRST (the current block is its entry): a node of 0 goes to AT_END; the
// insert point is then the round's body.
ChainWalk open_walk(LowerCtx &c, llvm::Value *first, llvm::BasicBlock *at_end, const char *name) {
  auto *entry = c.b.GetInsertBlock();
  auto *head = block(c, name), *body = block(c, name);
  c.b.CreateBr(head);
  c.b.SetInsertPoint(head);
  ChainWalk w{c.b.CreatePHI(c.b.getInt64Ty(), 2), c.b.CreatePHI(c.b.getInt64Ty(), 2)};
  w.index->addIncoming(c.b.getInt64(0), entry);
  w.node->addIncoming(first, entry);
  c.b.CreateCondBr(c.b.CreateICmpEQ(w.node, c.b.getInt64(0)), at_end, body);
  c.b.SetInsertPoint(body);
  return w;
}

// Ends a round in the current block: on to NEXT, or to PAST_LIMIT once LIMIT rounds are done.
// Returns the rounds done.
llvm::Value *close_walk(LowerCtx &c, ChainWalk w, llvm::Value *next, llvm::Value *limit,
                        llvm::BasicBlock *past_limit) {
  llvm::Value *rounds = c.b.CreateAdd(w.index, c.b.getInt64(1));
  w.index->addIncoming(rounds, c.b.GetInsertBlock());
  w.node->addIncoming(next, c.b.GetInsertBlock());
  c.b.CreateCondBr(c.b.CreateICmpULT(rounds, limit), w.index->getParent(), past_limit);
  return rounds;
}

// What a thread search reads: this thread's id and the offsets of the process record.
struct ThreadSearch {
  llvm::Value *word, *tid, *threads_head, *native_thread_id, *thread_next, *pthread_tid, *cframe,
      *current_frame;
};

// Walks INTERP's thread states (newest first) for this thread's. Returns the block it goes to
// with the state's current frame (not 0), and that frame; where the walk ends without one (or
// with this thread's state idle, without a frame), it goes to NOT_FOUND.
std::pair<llvm::BasicBlock *, llvm::Value *> find_thread(LowerCtx &c, const ThreadSearch &s,
                                                         llvm::Value *interp,
                                                         llvm::BasicBlock *not_found) {
  llvm::Value *head = read_word(c, s.word, c.b.CreateAdd(interp, s.threads_head));
  auto *next = block(c, "py.thread.next"), *match = block(c, "py.thread.match");
  auto *found = block(c, "py.thread.found");
  llvm::Value *via_pthread = c.b.CreateICmpNE(s.pthread_tid, c.b.getInt64(abi::kPyNoOffset));
  llvm::Value *no_cframe = c.b.CreateICmpEQ(s.cframe, c.b.getInt64(abi::kPyNoOffset));
  ChainWalk threads = open_walk(c, head, not_found, "py.threads");
  llvm::Value *ts = threads.node;
  llvm::Value *ntid = read_word(c, s.word, c.b.CreateAdd(ts, s.native_thread_id));
  // 3.10: a pthread_t; its tid is read from glibc's struct pthread (elsewhere an address of 0,
  // whose read fails fast, rather than a branch that doubles the verifier's paths).
  llvm::Value *tid_at =
      c.b.CreateSelect(via_pthread, c.b.CreateAdd(ntid, s.pthread_tid), c.b.getInt64(0));
  llvm::Value *pthread_tid_value = c.b.CreateAnd(read_word(c, s.word, tid_at), 0xffffffffu);
  ntid = c.b.CreateSelect(via_pthread, pthread_tid_value, ntid);
  c.b.CreateCondBr(c.b.CreateICmpEQ(ntid, s.tid), match, next);
  c.b.SetInsertPoint(next);
  close_walk(c, threads, read_word(c, s.word, c.b.CreateAdd(ts, s.thread_next)),
             c.b.getInt64(kMaxThreads), not_found);
  // Its current frame: through the _PyCFrame in 3.11/3.12, in the thread state otherwise (a read
  // of address 0 where there is no _PyCFrame, as above).
  c.b.SetInsertPoint(match);
  llvm::Value *cframe = read_word(
      c, s.word, c.b.CreateSelect(no_cframe, c.b.getInt64(0), c.b.CreateAdd(ts, s.cframe)));
  llvm::Value *holder = c.b.CreateSelect(no_cframe, ts, cframe);
  llvm::Value *first = read_word(c, s.word, c.b.CreateAdd(holder, s.current_frame));
  c.b.CreateCondBr(c.b.CreateICmpNE(first, c.b.getInt64(0)), found, not_found);
  return {found, first};
}

} // namespace

bool probe_takes_python_frames(const Probe &probe) {
  bool found = false;
  for_each_expr(probe, [&](const Expr &e) {
    found = found || is_builtin(e, BuiltinId::Pystack) || e.type.kind == TypeKind::UstackPy;
  });
  return found;
}

void add_python_maps(const Program &program, layout::MapLayout &layout, abi::ProgramSpec &spec) {
  if (!program_uses_pystack(program))
    return;
  abi::MapSpec m;
  m.name = "python_procs";
  m.bpf_type = BPF_MAP_TYPE_HASH;
  m.key_size = 4;
  m.value_size = sizeof(abi::PythonProcess);
  m.max_entries = kProcessEntries;
  m.internal = true;
  spec.maps.push_back(std::move(m));
  layout.python_procs = static_cast<int>(spec.maps.size() - 1);
  spec.python_procs_map = layout.python_procs;
}

Val lower_pystack(LowerCtx &c, uint32_t frames, llvm::Value *into) {
  using P = abi::PythonProcess;
  uint32_t size = abi::pystack_size(frames);
  // 32 frame slots whatever FRAMES is, so a masked index stays inside.
  llvm::Value *buf = into ? into : scratch_slot(c, abi::pystack_size(32));
  zero_bytes(c, buf, 8, size);
  llvm::Value *frame_buf = scratch_slot(c, kFrameSlot);
  llvm::Value *word = stack_i64(c);
  llvm::Type *i64 = c.b.getInt64Ty();

  llvm::Value *pid_tgid = call_helper(c, BPF_FUNC_get_current_pid_tgid, {});
  llvm::Value *pid = c.b.CreateLShr(pid_tgid, 32);
  llvm::Value *tid = c.b.CreateAnd(pid_tgid, 0xffffffffu);
  c.b.CreateAlignedStore(c.b.CreateTrunc(pid, c.b.getInt32Ty()), buf, llvm::Align(8));
  store_status(c, buf, c.b.getInt64(abi::kPyStackNoInterpreter));
  llvm::Value *key = stack_i64(c);
  c.b.CreateStore(pid, key);
  llvm::Value *info = call_helper(c, BPF_FUNC_map_lookup_elem,
                                  {map_ref(c, c.maps->python_procs), key}, c.b.getPtrTy());

  auto *known = block(c, "py.known"), *done = block(c, "py.done");
  c.b.CreateCondBr(c.b.CreateIsNull(info), done, known);
  c.b.SetInsertPoint(known);
  llvm::Value *runtime = c.b.CreateAlignedLoad(i64, info, llvm::Align(8));
  llvm::Value *heads = c.b.CreateAdd(runtime, offset_of(c, info, offsetof(P, interpreters_head)));
  llvm::Value *newest = read_word(c, word, heads);
  llvm::Value *main_interp = read_word(c, word, c.b.CreateAdd(heads, c.b.getInt64(8)));
  ThreadSearch search{word,
                      tid,
                      offset_of(c, info, offsetof(P, threads_head)),
                      offset_of(c, info, offsetof(P, native_thread_id)),
                      offset_of(c, info, offsetof(P, thread_next)),
                      offset_of(c, info, offsetof(P, pthread_tid)),
                      offset_of(c, info, offsetof(P, cframe)),
                      offset_of(c, info, offsetof(P, current_frame))};
  store_status(c, buf, c.b.getInt64(abi::kPyStackNoThread));

  // The newest interpreter's thread states (interpreters.head), then, where this thread has none
  // with a frame there, the main interpreter's (interpreters.main, beside it): with a
  // subinterpreter, the code it runs on a thread, or the main interpreter's. Two walks of one
  // branch each: one walk over every interpreter costs the verifier 27 times as much.
  auto *in_main = block(c, "py.main"), *found = block(c, "py.found");
  auto [found_newest, first_newest] = find_thread(c, search, newest, in_main);
  c.b.SetInsertPoint(found_newest);
  c.b.CreateBr(found);
  c.b.SetInsertPoint(in_main);
  auto [found_main, first_main] = find_thread(c, search, main_interp, done);
  c.b.SetInsertPoint(found_main);
  c.b.CreateBr(found);
  c.b.SetInsertPoint(found);
  auto *first = c.b.CreatePHI(i64, 2);
  first->addIncoming(first_newest, found_newest);
  first->addIncoming(first_main, found_main);
  llvm::Value *code_off = offset_of(c, info, offsetof(P, frame_code));
  llvm::Value *prev_off = offset_of(c, info, offsetof(P, frame_previous));
  llvm::Value *instr_off = offset_of(c, info, offsetof(P, frame_instr));
  llvm::Value *owner_off = offset_of(c, info, offsetof(P, frame_owner));
  llvm::Value *entry_off = offset_of(c, info, offsetof(P, frame_is_entry));
  // Bounded for the verifier: kPyMaxFrameBytes < 128 <= kFrameSlot.
  llvm::Value *frame_bytes = c.b.CreateAnd(offset_of(c, info, offsetof(P, frame_bytes)), 127);
  // 3.10's f_lasti is an int: the word read there keeps its low 32 bits (f_lineno follows).
  llvm::Value *instr_mask = c.b.CreateLShr(
      c.b.getInt64(~0ull),
      c.b.CreateAnd(c.b.CreateSub(c.b.getInt64(64),
                                  c.b.CreateShl(offset_of(c, info, offsetof(P, frame_instr_size)), 3)),
                    63));

  // The frames, innermost first, every one (shims too: the owner rides in the code word's top
  // byte for the runtime to skip them). A per-frame branch would double the verifier's paths.
  auto *fend = block(c, "py.frames.end"), *ftrunc = block(c, "py.frames.truncated");
  ChainWalk walk = open_walk(c, first, fend, "py.frames");
  llvm::Value *fj = walk.index, *fr = walk.node;
  call_helper(c, BPF_FUNC_probe_read_user,
              {frame_buf, c.b.CreateTrunc(frame_bytes, c.b.getInt32Ty()),
               c.b.CreateIntToPtr(fr, c.b.getPtrTy())});
  llvm::Value *code = frame_field(c, frame_buf, code_off, i64);
  llvm::Value *instr = c.b.CreateAnd(frame_field(c, frame_buf, instr_off, i64), instr_mask);
  llvm::Value *prev = frame_field(c, frame_buf, prev_off, i64);
  llvm::Value *owner = frame_field(c, frame_buf, owner_off, c.b.getInt8Ty());
  llvm::Value *is_entry = frame_field(c, frame_buf, entry_off, c.b.getInt8Ty());
  code = c.b.CreateOr(c.b.CreateAnd(code, c.b.getInt64(abi::kPyCodeMask)),
                      c.b.CreateShl(owner, abi::kPyOwnerShift));
  code = c.b.CreateOr(code, c.b.CreateShl(c.b.CreateAnd(is_entry, c.b.getInt64(1)),
                                          abi::kPyEntryShift));
  llvm::Value *at = c.b.CreateAdd(c.b.CreateShl(c.b.CreateAnd(fj, c.b.getInt64(31)), 4),
                                  c.b.getInt64(8));
  llvm::Value *slot = c.b.CreateInBoundsGEP(c.b.getInt8Ty(), buf, at);
  c.b.CreateAlignedStore(code, slot, llvm::Align(8));
  c.b.CreateAlignedStore(instr, c.b.CreateInBoundsGEP(c.b.getInt8Ty(), slot, c.b.getInt64(8)),
                         llvm::Align(8));
  llvm::Value *fj_next = close_walk(c, walk, prev, c.b.getInt64(frames), ftrunc);

  c.b.SetInsertPoint(ftrunc); // FRAMES taken: more if PREV is not the end
  llvm::Value *more = c.b.CreateZExt(c.b.CreateICmpNE(prev, c.b.getInt64(0)), i64);
  store_status(c, buf, c.b.CreateOr(fj_next, c.b.CreateMul(more, c.b.getInt64(abi::kPyStackTruncated))));
  c.b.CreateBr(done);
  c.b.SetInsertPoint(fend);
  store_status(c, buf, fj);
  c.b.CreateBr(done);

  c.b.SetInsertPoint(done);
  return {buf, 8};
}

Val lower_ustack_py(LowerCtx &c, const Type &t) {
  uint32_t py = t.elems[0].size, native = t.elems[1].size;
  // The Python part writes within its 32 masked slots; the native part follows the frames taken.
  llvm::Value *buf = scratch_slot(c, std::max(abi::pystack_size(32), py + native));
  lower_pystack(c, (py - 8) / 16, buf);
  llvm::Value *stack = byte_ptr(c, buf, py);
  zero_bytes(c, stack, 8, native);
  call_helper(c, BPF_FUNC_get_stack,
              {c.regs, stack, c.b.getInt32(native), c.b.getInt64(BPF_F_USER_STACK)});
  return {buf, 8};
}

} // namespace gpubt::codegen::bpf
