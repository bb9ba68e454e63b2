// CPython discovery for pystack (see python_interp.h). Offsets of 3.11 were measured against
// Debian's python3.11-dev internal headers (offsetof), those of 3.12 read from CPython 3.12's
// Include/internal headers; 3.13 publishes its own at the start of _PyRuntime (_Py_DebugOffsets,
// cookie "xdebugpy"), read from the file since it is initialized data.
#include "runtime/process/python_interp.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cinttypes>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "runtime/abi/unique_fd.h"
#include "runtime/process/pthread_tid.h"
#include "runtime/process/symbol_address.h"

namespace gpubt::runtime {
namespace {

struct Segment {
  uint64_t vaddr, offset, filesz;
};

struct ElfLoad {
  std::vector<Segment> loads; // PT_LOAD, in file order
};

std::optional<ElfLoad> read_loads(const std::string &path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  Elf64_Ehdr eh;
  if (fd.get() < 0 || pread(fd.get(), &eh, sizeof eh, 0) != sizeof eh ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return std::nullopt;
  ElfLoad out;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (pread(fd.get(), &ph, sizeof ph, eh.e_phoff + i * eh.e_phentsize) != sizeof ph)
      return std::nullopt;
    if (ph.p_type == PT_LOAD)
      out.loads.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
  }
  if (out.loads.empty())
    return std::nullopt;
  return out;
}

// SIZE bytes of the file at virtual address VADDR (initialized data only).
bool read_file_at(const std::string &path, const ElfLoad &elf, uint64_t vaddr, void *dst,
                  size_t size) {
  for (const auto &s : elf.loads)
    if (vaddr >= s.vaddr && vaddr + size <= s.vaddr + s.filesz) {
      UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
      return fd.get() >= 0 &&
             pread(fd.get(), dst, size, off_t(s.offset + vaddr - s.vaddr)) == ssize_t(size);
    }
  return false;
}

using abi::kPyNoOffset;

// 3.10 (x86-64, default build; offsetof against pyenv's 3.10.13 headers, internal ones
// included): interpreters.head 32, tstate_head 8, next 8, thread_id (a pthread_t) 176, frame 24;
// PyFrameObject: f_back 24, f_code 32, f_lasti 96 (an int, in code units). No owner and no
// is_entry: both read f_code's top byte, 0 in a user address (every frame is its own eval loop
// call, as the printer knows by frame_objects).
Result<PythonInterpreter> layout_310() {
  auto tid_at = pthread_tid_offset();
  if (!tid_at)
    return make_error("CPython 3.10 names threads by pthread_t, and where this libc's struct "
                      "pthread keeps the tid was not found");
  PythonInterpreter p;
  p.process = {0, 32, 8, 8, 176, kPyNoOffset, 24, 32, 24, 96, 39, kPyNoOffset, 39, *tid_at, 104, 4};
  p.frame_objects = true;
  p.objects = {.code_filename = 104, .code_name = 112, .code_linetable = 120,
               .code_firstlineno = 40, .code_adaptive = 0, .ascii_size = 48, .compact_size = 72};
  return p;
}

// 3.11 and 3.12 (x86-64, default build). No owner_cstack in 3.11: it has no shim frames.
PythonInterpreter layout_311() {
  PythonInterpreter p;
  p.process = {0, 40, 16, 8, 160, 56, 8, 32, 48, 56, 69, kPyNoOffset, 68};
  // PyASCIIObject still has wstr; PyCompactUnicodeObject utf8_length, utf8, wstr_length.
  p.objects = {.code_filename = 112, .code_name = 120, .code_linetable = 136,
               .code_firstlineno = 72, .code_adaptive = 184, .ascii_size = 48, .compact_size = 72};
  return p;
}

PythonInterpreter layout_312() {
  PythonInterpreter p;
  // interpreters.head 40, threads.head 72 (after monitoring_version and last_restart_version),
  // next 8, native_thread_id 144, cframe 56 -> current_frame 0; frame: f_code 0, previous 8,
  // prev_instr 56, owner 70; FRAME_OWNED_BY_CSTACK = 3 (no is_entry: the owner read again).
  p.process = {0, 40, 72, 8, 144, 56, 0, 0, 8, 56, 70, 3, 70};
  p.objects = {.code_filename = 112, .code_name = 120, .code_linetable = 136,
               .code_firstlineno = 68, .code_adaptive = 192, .ascii_size = 40, .compact_size = 56};
  return p;
}

// 3.13's _Py_DebugOffsets, as u64 words: cookie, version, free_threaded, runtime_state{size,
// finalizing, interpreters_head}, interpreter_state{size, id, next, threads_head, 9 more},
// thread_state{size, prev, next, interp, current_frame, thread_id, native_thread_id, ...}, ...
Result<PythonInterpreter> layout_from_debug_offsets(const uint64_t *w, size_t n, int minor) {
  if (minor != 13 || n < 48)
    return make_error(fmt::format("CPython 3.{}'s debug offsets are not known to gpubt", minor));
  // The thread state's block starts where (prev, next, interp) read (0, 8, 16).
  size_t ts = 0;
  for (size_t i = 10; i + 3 < 32 && !ts; ++i)
    if (w[i + 1] == 0 && w[i + 2] == 8 && w[i + 3] == 16)
      ts = i;
  if (!ts || w[3] == 0 || w[3] > 1 << 20)
    return make_error("CPython 3.13's debug offsets do not have the expected layout");
  size_t fr = ts + 9, code = fr + 6;
  PythonInterpreter p;
  auto u32 = [&](size_t i) { return uint32_t(w[i]); };
  p.process = {0,          u32(5),      u32(9),         u32(ts + 2), u32(ts + 6),
               kPyNoOffset, u32(ts + 4), u32(fr + 2),   u32(fr + 1), u32(fr + 3),
               u32(fr + 5), 3,          u32(fr + 5)};
  p.process.interpreter_next = u32(8);
  p.objects.code_filename = u32(code + 1);
  p.objects.code_name = u32(code + 2);
  p.objects.code_linetable = u32(code + 4);
  p.objects.code_firstlineno = u32(code + 5);
  p.objects.code_adaptive = u32(code + 9);
  p.objects.ascii_size = 40;
  p.objects.compact_size = 56;
  if (p.process.frame_code >= 64 || p.process.frame_instr >= 64 || p.process.frame_previous >= 64 ||
      p.process.frame_owner >= abi::kPyFrameBytes)
    return make_error("CPython 3.13's frame fields lie past what pystack reads");
  return p;
}

// 3.10: whether the first thread state of PID (where there is one yet) names, through
// pthread_tid, one of PID's threads; a libc other than the one measured (musl) would not.
bool pthread_tid_holds(int pid, const abi::PythonProcess &p) {
  auto word = [&](uint64_t addr) {
    uint64_t v = 0;
    iovec local{&v, sizeof v}, remote{reinterpret_cast<void *>(addr), sizeof v};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == ssize_t(sizeof v) ? v : 0;
  };
  uint64_t interp = word(p.runtime + p.interpreters_head);
  uint64_t ts = interp ? word(interp + p.threads_head) : 0;
  uint64_t thread = ts ? word(ts + p.native_thread_id) : 0;
  if (!thread)
    return true; // no thread state yet (a process held before its interpreter starts)
  uint32_t tid = uint32_t(word(thread + p.pthread_tid));
  return tid && access(fmt::format("/proc/{}/task/{}", pid, tid).c_str(), F_OK) == 0;
}

std::string basename_of(const std::string &path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

bool defines_python_runtime(const std::string &path) {
  auto base = basename_of(path);
  if (base.rfind("python", 0) != 0 && base.rfind("libpython", 0) != 0)
    return false;
  // Py_Initialize too: an interpreter older than 3.7 (no _PyRuntime) is one to warn about.
  return elf_symbol_address(path, "_PyRuntime").has_value() ||
         elf_symbol_address(path, "Py_Initialize").has_value();
}

Result<PythonInterpreter> read_python_file(const std::string &given) {
  char real[PATH_MAX];
  std::string path = realpath(given.c_str(), real) ? real : given; // one name in messages
  auto runtime = elf_symbol_address(path, "_PyRuntime");
  if (!runtime)
    return make_error(path + " has no _PyRuntime symbol (CPython older than 3.7, or stripped): "
                             "pystack reads 3.10 to 3.13");
  auto elf = read_loads(path);
  if (!elf)
    return make_error("cannot read the ELF program headers of " + path);
  auto version_sym = elf_symbol_address(path, "Py_Version");
  uint32_t hex = 0;
  if (version_sym) {
    if (!read_file_at(path, *elf, version_sym->address, &hex, 4))
      return make_error("cannot read Py_Version in " + path);
  } else if (elf_symbol_address(path, "PyAIter_Check")) { // new in 3.10, Py_Version in 3.11
    hex = 0x030a0000;
  } else {
    return make_error(path + " is CPython 3.9 or older (neither Py_Version nor PyAIter_Check): "
                             "pystack reads 3.10 to 3.13");
  }
  int major = hex >> 24, minor = (hex >> 16) & 0xff;
  Result<PythonInterpreter> layout = make_error("");
  if (major == 3 && minor == 10)
    layout = layout_310();
  else if (major == 3 && minor == 11)
    layout = layout_311();
  else if (major == 3 && minor == 12)
    layout = layout_312();
  else if (major == 3 && minor >= 13) {
    uint64_t words[48] = {};
    if (!read_file_at(path, *elf, runtime->address, words, sizeof words) ||
        memcmp(words, "xdebugpy", 8) != 0)
      return make_error(fmt::format("{} is CPython {}.{} without _Py_DebugOffsets", path, major,
                                    minor));
    layout = layout_from_debug_offsets(words, 48, minor);
  } else
    layout = make_error(fmt::format("{} is CPython {}.{}: pystack reads 3.10 to 3.13", path,
                                    major, minor));
  if (!layout)
    return make_error(layout.error().find(path) == 0 ? layout.error()
                                                     : path + ": " + layout.error());
  auto code_type = elf_symbol_address(path, "PyCode_Type");
  if (!code_type)
    return make_error(path + " has no PyCode_Type symbol");
  layout->major = major;
  layout->minor = minor;
  layout->path = path;
  layout->process.runtime = runtime->address;
  layout->code_type = code_type->address;
  return layout;
}

Result<PythonInterpreter> find_python(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps)
    return make_error(fmt::format("process {} is gone", pid));
  std::string line;
  std::set<std::string> tried;
  while (std::getline(maps, line)) {
    uint64_t start = 0, end = 0, pgoff = 0;
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end,
               &pgoff, &path_at) < 3 ||
        path_at <= 0 || size_t(path_at) >= line.size() || line[path_at] != '/' || pgoff != 0)
      continue;
    std::string path = line.substr(path_at);
    if (!tried.insert(path).second || !defines_python_runtime(path))
      continue;
    auto interp = read_python_file(path);
    if (!interp)
      return interp;
    auto elf = read_loads(path);
    if (!elf)
      return make_error("cannot read the ELF program headers of " + path);
    // The load bias: where the file's first page went, less where it asked to be.
    uint64_t bias = start - (elf->loads.front().vaddr & ~uint64_t(0xfff));
    interp->process.runtime += bias;
    interp->code_type += bias;
    if (interp->frame_objects && !pthread_tid_holds(pid, interp->process))
      return make_error(fmt::format("{}'s thread states do not name process {}'s threads where "
                                    "glibc's struct pthread would (another libc?)", path, pid));
    return interp;
  }
  return make_error(fmt::format("process {} has no CPython interpreter mapped", pid));
}

bool python_absent(const std::string &why) {
  return why.find("no CPython interpreter mapped") != std::string::npos ||
         why.find("is gone") != std::string::npos;
}

void warn_python(const std::string &why) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lock(mu);
  if (!python_absent(why) && warned.insert(why).second)
    std::fprintf(stderr, "WARNING: pystack: %s; Python frames are left out\n", why.c_str());
}

const Result<PythonInterpreter> &python_of(int pid) {
  static std::mutex mu;
  static std::map<int, Result<PythonInterpreter>> known;
  std::lock_guard lock(mu);
  auto it = known.find(pid);
  if (it == known.end() || (!it->second && python_absent(it->second.error())))
    it = known.insert_or_assign(pid, find_python(pid)).first;
  return it->second;
}

} // namespace gpubt::runtime
