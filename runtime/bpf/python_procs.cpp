// The python_procs map and the interpreter stops (see python_procs.h).
#include "runtime/bpf/python_procs.h"

#include <bpf/bpf.h>
#include <dirent.h>

#include <cstring>
#include <cstdlib>

#include "runtime/bpf/exit_hold.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/python_frames.h"
#include "runtime/process/python_interp.h"
#include "runtime/process/python_threads.h"

namespace gpubt::runtime {
namespace {

// Calls F(pid, frames) for every pystack value within TYPE's bytes at DATA.
template <class F> void each_pystack(const abi::ValueType &type, const uint8_t *data, F &&f) {
  if (type.kind == abi::ValueType::PyStack) {
    abi::PyStackHeader h;
    memcpy(&h, data, sizeof h);
    std::vector<abi::PyStackFrame> frames((type.size - sizeof h) / sizeof(abi::PyStackFrame));
    memcpy(frames.data(), data + sizeof h, frames.size() * sizeof(abi::PyStackFrame));
    size_t n = std::min<size_t>(h.status & 0xffff, frames.size());
    if (!(h.status & (abi::kPyStackNoInterpreter | abi::kPyStackNoThread)))
      f(int(h.pid), std::span<const abi::PyStackFrame>(frames.data(), n));
    return;
  }
  for (size_t i = 0; i < type.elems.size() && i < type.offsets.size(); ++i)
    each_pystack(type.elems[i], data + type.offsets[i], f);
}

bool has_pystack(const abi::ValueType &t) {
  if (t.kind == abi::ValueType::PyStack)
    return true;
  for (const auto &e : t.elems)
    if (has_pystack(e))
      return true;
  return false;
}

} // namespace

Status register_python(int procs_fd, int pid) {
  const auto &py = python_of(pid);
  if (!py)
    return make_error(py.error());
  uint32_t key = uint32_t(pid);
  if (bpf_map_update_elem(procs_fd, &key, &py.value().process, BPF_ANY) != 0)
    return make_error(std::string("cannot write the python_procs map: ") + strerror(errno));
  // The code running now (a -p target's main module: freed once it has run, perhaps before the
  // maps print) is read while it exists.
  remember_python_frames(pid, python_frames_now(pid, py.value()));
  return Ok{};
}

void register_running_pythons(int procs_fd) {
  DIR *d = opendir("/proc");
  if (!d)
    return;
  while (dirent *e = readdir(d)) {
    char *end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (pid > 0 && end && *end == '\0')
      (void)register_python(procs_fd, int(pid));
  }
  closedir(d);
}

namespace {

// The file defining the interpreter EXE runs: EXE itself or the libpython it links.
Result<std::string> interpreter_of(const std::string &exe) {
  std::string interp;
  if (defines_python_runtime(exe))
    interp = exe;
  for (const auto &lib : interp.empty() ? linked_libraries(exe) : std::vector<std::string>{})
    if (interp.empty() && defines_python_runtime(lib))
      interp = lib;
  if (interp.empty())
    return make_error(exe + " runs no CPython interpreter (neither it nor a library it links "
                            "defines _PyRuntime)");
  if (auto py = read_python_file(interp); !py) // a version pystack does not read: say so now
    return make_error(py.error());
  return interp;
}

} // namespace

Result<std::vector<UniqueFd>> hold_at_python(int pid, const std::string &exe, bool running) {
  auto interp = interpreter_of(exe);
  if (!interp)
    return make_error(interp.error());
  // PyEval_EvalCode runs a module's code object (the main script's, -c's; imports' inside it):
  // CPython frees it right after the outermost call returns, so the maps are read there too.
  // Not for a running process: the return of the call in flight cannot be probed (a uretprobe
  // sees calls entered after it attached), and every exec() would count as outermost.
  std::vector<UniqueFd> fds;
  for (int i = running ? 2 : 0; i < 3; ++i) {
    auto hold = i == 0   ? hold_at(pid, *interp, "Py_InitializeFromConfig")
                : i == 1 ? hold_after_outermost(pid, *interp, "PyEval_EvalCode")
                         : hold_at(pid, *interp, "Py_FinalizeEx");
    if (!hold)
      return make_error(hold.error());
    for (auto &fd : *hold)
      fds.push_back(std::move(fd));
  }
  return fds;
}

void remember_python_frames_in(const std::vector<abi::MapSpec> &specs,
                               const std::vector<MapData> &maps) {
  for (size_t m = 0; m < specs.size() && m < maps.size(); ++m) {
    const auto &spec = specs[m];
    bool in_key = has_pystack(spec.key), in_value = has_pystack(spec.value);
    if (spec.internal || (!in_key && !in_value))
      continue;
    for (const auto &entry : maps[m]) {
      if (in_key && entry.key.size() >= spec.key.size)
        each_pystack(spec.key, entry.key.data(), remember_python_frames);
      for (const auto &v : entry.values)
        if (in_value && v.size() >= spec.value.size)
          each_pystack(spec.value, v.data(), remember_python_frames);
    }
  }
}

} // namespace gpubt::runtime
