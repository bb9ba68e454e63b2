// The run of one program: setup, attach, the ring buffer loop and the END/print phase.
#include "runtime/bpf/session.h"
#include "runtime/bpf/attach.h"
#include "runtime/bpf/detach.h"
#include "runtime/process/binary_paths.h"
#include "runtime/bpf/exit_hold.h"
#include "runtime/bpf/stop_guard.h"
#include "runtime/bpf/kernel_names.h"
#include "runtime/bpf/loader.h"
#include "runtime/bpf/perf_events.h"
#include "runtime/bpf/python_procs.h"
#include "runtime/process/python_interp.h"
#include "runtime/process/stop_signals.h"
#include "runtime/bpf/map_ops.h"
#include "runtime/process/symbolizer.h"
#include "runtime/bpf/triggers.h"
#include <cstdio>
#include <bpf/libbpf.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>

namespace gpubt::runtime {
namespace {

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); // what bpf_ktime_get_ns counts
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

bool has_user_addresses(const abi::ValueType &t) {
  if (t.kind == abi::ValueType::KernelName || t.kind == abi::ValueType::UStack ||
      t.kind == abi::ValueType::PyStack)
    return true;
  for (const auto &e : t.elems)
    if (has_user_addresses(e))
      return true;
  return false;
}

bool prints_user_addresses(const abi::ProgramSpec &spec) {
  for (const auto &m : spec.maps)
    if (has_user_addresses(m.key) || has_user_addresses(m.value))
      return true;
  for (const auto &f : spec.formats)
    for (const auto &a : f.args)
      if (has_user_addresses(a.type))
        return true;
  return spec.kernel_names_map >= 0;
}

int ringbuf_callback(void *ctx, void *data, size_t size) {
  return static_cast<Session *>(ctx)->handle_event_thunk(data, size);
}

} // namespace

Session::Session(const abi::ProgramSpec &spec, SessionOptions options)
    : spec_(spec), options_(std::move(options)) {
  function_names_.probe_names = &spec_.probe_names;
}

Session::~Session() {
  Progress progress(options_.progress, "detaching", options_.progress_after_ns);
  detach_all(events_, &progress, attached_);
  // The process must not stay stopped at a library load (or at exit) once gpubt is gone (-p),
  // nor ignore the SIGTERM that ends a -c child.
  int pid = child_ && child_->exited() ? -1 : target_pid();
  if (pid > 0 && (load_watch_ || !exit_hold_.empty())) {
    bool loaded = load_watch_ && load_watch_->take_loads();
    load_watch_.reset();
    exit_hold_.clear();
    if (wait_until_stopped(pid, loaded ? 100 : 0))
      kill(pid, SIGCONT);
  }
  if (rb_)
    ring_buffer__free(rb_);
}

Result<std::unique_ptr<Session>> Session::create(const abi::ProgramSpec &spec,
                                                 SessionOptions options) {
  std::unique_ptr<Session> s(new Session(spec, std::move(options)));
  if (auto st = s->setup(); !st)
    return make_error(st.error());
  return s;
}

Status Session::setup() {
  if (options_.pid > 0) {
    auto fd = open_pidfd(options_.pid);
    if (!fd)
      return make_error(fd.error());
    target_pidfd_ = std::move(*fd);
  }
  auto maps = create_maps(spec_);
  if (!maps)
    return make_error(maps.error());
  maps_ = std::move(*maps);
  if (!options_.command.empty()) {
    // Maps the child's GPU agent reads: fds without close-on-exec while it is forked.
    std::vector<UniqueFd> shared;
    for (int index : options_.inherited_maps) {
      shared.emplace_back(fcntl(maps_.at(index).get(), F_DUPFD, 3));
      if (shared.back().get() < 0)
        return make_error(std::string("cannot share map ") + spec_.maps[index].name +
                          " with the traced program: " + strerror(errno));
      inherited_fds_[index] = shared.back().get();
    }
    auto child = ChildProcess::spawn(options_.command, options_.child_stdout_to_stderr);
    if (!child)
      return make_error(child.error());
    child_ = std::move(*child);
  }
  if (spec_.globals_map >= 0) {
    int pid = child_ ? child_->pid() : 0;
    if (auto st = write_globals(maps_[spec_.globals_map].get(), spec_.maps[spec_.globals_map],
                                monotonic_ns(), pid);
        !st)
      return st;
  }
  for (const auto &probe : spec_.probes) {
    auto prog = load_program(probe, maps_);
    if (!prog)
      return make_error(prog.error());
    progs_.push_back(std::move(*prog));
  }
  // kname() and ustack values are symbolized at the end, after a short-lived target exited: hold
  // it at exit() until its mappings are saved (best effort: without it they print as addresses).
  if (target_pid() > 0 && prints_user_addresses(spec_)) {
    guard_stops();
    if (auto hold = hold_at_exit(target_pid()))
      exit_hold_ = std::move(*hold);
  }
  setup_python();
  if (spec_.ringbuf_map >= 0) {
    rb_ = ring_buffer__new(maps_[spec_.ringbuf_map].get(), ringbuf_callback, this, nullptr);
    if (!rb_)
      return make_error(std::string("failed to open the ring buffer: ") + strerror(errno));
  }
  return Ok{};
}

void Session::setup_python() {
  if (spec_.python_procs_map < 0)
    return;
  int fd = maps_[spec_.python_procs_map].get();
  if (target_pid() <= 0) {
    register_running_pythons(fd); // processes started later have no Python frames
  } else if (child_) {
    // Held (exit_hold_'s way) where the interpreter starts and ends: at_python_stop().
    auto hold = hold_at_python(target_pid(), child_->path(), false);
    if (!hold && hold.error().find("runs no CPython") != std::string::npos) {
      python_poll_ = true; // a wrapper (a pyenv shim, a shell) may exec python: look each loop
      return;
    }
    if (!hold)
      return warn_python(hold.error());
    if (exit_hold_.empty())
      guard_stops();
    for (auto &h : *hold)
      exit_hold_.push_back(std::move(h));
  } else if (auto st = register_python(fd, target_pid()); !st) {
    warn_python(st.error());
  } else {
    python_registered_ = true;
    // -p: held before the interpreter finalizes, so that what the maps hold is named while its
    // code objects exist (a process that ends before the maps print).
    const auto &py = python_of(target_pid());
    if (auto hold = py ? hold_at_python(target_pid(), py.value().path, true)
                       : Result<std::vector<UniqueFd>>(make_error(py.error()))) {
      guard_stops();
      for (auto &h : *hold)
        exit_hold_.push_back(std::move(h));
    }
  }
}

void Session::at_python_stop(EventHandler &handler) {
  if (python_poll_ && !python_registered_ && child_ && child_->execed()) {
    // Frames taken before this finds the interpreter are left out.
    auto st = register_python(maps_[spec_.python_procs_map].get(), target_pid());
    if (st || !python_absent(st.error())) {
      python_registered_ = true;
      if (!st)
        warn_python(st.error());
    }
  }
  if (spec_.python_procs_map < 0 || target_pid() <= 0 || python_poll_ ||
      process_state(target_pid()) != 'T')
    return;
  if (!python_registered_) {
    // Tried once: an error is warned about once. A stop before the interpreter is mapped (the
    // load watch's first, at the program's start) tries again at the next.
    auto st = register_python(maps_[spec_.python_procs_map].get(), target_pid());
    python_registered_ = st || !python_absent(st.error());
    if (!st)
      warn_python(st.error());
  }
  // Perhaps at Py_FinalizeEx: the events so far, and the frames in maps, are named now.
  consume(handler);
  std::vector<MapData> contents(spec_.maps.size());
  for (size_t i = 0; i < spec_.maps.size(); ++i)
    if (!spec_.maps[i].internal)
      contents[i] = read_map(int(i));
  remember_python_frames_in(spec_.maps, contents);
}

int Session::target_pid() const {
  if (child_)
    return child_->pid();
  return options_.pid > 0 ? options_.pid : -1;
}

Symbolizer Session::symbolizer() const {
  auto process = with_kernel_names(make_process_symbolizer(target_pid()),
                                   spec_.kernel_names_map >= 0 ? map_fd(spec_.kernel_names_map) : -1,
                                   target_pid());
  // By pointer: probes attached late (attach_loaded) add names while printers hold this.
  return [process, names = &function_names_.funcs, mutex = names_mutex_](uint64_t value) {
    if (!(value & abi::kFuncCookieTag))
      return process(value);
    uint64_t index = value & abi::kCookieFuncMask;
    {
      std::lock_guard lock(*mutex);
      if (index < names->size())
        return (*names)[index];
    }
    return process(value);
  };
}

abi::ProgramSpec Session::spec_snapshot() const {
  std::lock_guard lock(*names_mutex_);
  return spec_;
}

Result<Attached> Session::attach_named(const abi::ProbeSpec &probe, size_t probe_index,
                                       Progress *progress) {
  std::lock_guard lock(*names_mutex_);
  return attach_probe(probe, progs_[probe_index].get(), target_pid(), function_names_, progress);
}

Result<int> Session::attach() {
  int attached = 0;
  Progress progress(options_.progress, "attaching", options_.progress_after_ns);
  for (size_t i : attach_order()) {
    abi::ProbeSpec probe = spec_.probes[i];
    // cudart/cuda/hip: the library the traced program really uses (-c: before its exec).
    bool from_system = false;
    auto lib = child_ ? resolve_gpu_library(probe.target, -1, child_->path(), &from_system)
                      : resolve_gpu_library(probe.target, options_.pid, "", &from_system);
    // Neither linked nor mapped yet: wait for the copy the program loads (PyTorch's own).
    if (lib && (!*lib || from_system) && defer_until_loaded(i)) {
      attached += probe.hidden ? 0 : 1;
      continue;
    }
    // libcuda.so.1 comes with the driver: the system's is the one any program loads.
    if (lib && *lib && from_system && target_pid() > 0 && !probe.hidden &&
        probe.target != "cuda" && warned_aliases_.insert(probe.target).second)
      skipped_.push_back(probe.name + ": the traced program neither links nor maps " +
                         probe.target + "; probing " + **lib +
                         " (a program that loads its own copy later, e.g. PyTorch, needs -p "
                         "once loaded, or that library's path)");
    if (lib && !*lib && !probe.hidden)
      return make_error(probe.name + ": " + lib->error());
    if (lib && *lib && options_.verbose && told_aliases_.insert(probe.target).second)
      std::fprintf(stderr, "gpubt: %s is %s%s\n", probe.target.c_str(), (**lib).c_str(),
                   child_ && **lib == child_->path() ? " (linked statically into the program)"
                   : from_system                     ? " (the system's)"
                                                     : "");
    if (lib && *lib)
      probe.target = **lib;
    if (probe.kind == abi::AttachKind::Interval) { // started after BEGIN (run_begin)
      intervals_.push_back(i);
      attached += 1;
      continue;
    }
    auto evs = lib && !*lib ? Result<Attached>(make_error(lib->error()))
                            : attach_named(probe, i, probe.hidden ? nullptr : &progress);
    if (probe.hidden) { // codegen's helpers: best effort, never counted or reported
      if (evs)
        for (auto &e : evs->fds)
          events_.push_back(std::move(e));
      continue;
    }
    if (!evs)
      return make_error(evs.error());
    if (evs->count == 0 && evs->skipped.empty())
      unmatched_.push_back(probe.name);
    for (auto &why : evs->skipped)
      skipped_.push_back(probe.name + ": " + why);
    attached += evs->count;
    for (auto &e : evs->fds)
      events_.push_back(std::move(e));
  }
  progress.finish();
  attached_ = attached;
  return attached;
}

// Several probes on one event run in script order, as in bpftrace: a tracepoint's programs run
// in the order they were attached, but each uprobe, usdt or software perf event is a consumer of
// its own, and the kernel runs the newest first; those attach last probe first.
std::vector<size_t> Session::attach_order() const {
  std::vector<size_t> order;
  for (size_t i = 0; i < spec_.probes.size(); ++i)
    if (spec_.probes[i].kind == abi::AttachKind::Tracepoint)
      order.push_back(i);
  for (size_t i = spec_.probes.size(); i-- > 0;)
    if (spec_.probes[i].kind != abi::AttachKind::Tracepoint)
      order.push_back(i);
  return order;
}

bool Session::defer_until_loaded(size_t probe_index) {
  if (target_pid() <= 0 || load_watch_failed_)
    return false;
  if (!load_watch_) {
    guard_stops();
    auto watch = LoadWatch::start(target_pid(), child_ ? child_->path() : "");
    load_watch_failed_ = !watch;
    if (!watch)
      return false; // attach() falls back to the system's copy, with a warning
    load_watch_ = std::move(*watch);
  }
  const auto &probe = spec_.probes[probe_index];
  pending_.push_back(probe_index);
  if (!probe.hidden) {
    never_loaded_.insert(probe.target);
    pending_lines_.push_back(probe.name + " when the traced program loads " +
                             gpu_library_prefix(probe.target) + "*");
  }
  return true;
}

void Session::guard_stops() {
  // A -c child needs no guard: it dies with gpubt (PR_SET_PDEATHSIG), stopped or not.
  if (child_ || stop_guard_ || target_pid() <= 0)
    return;
  if (auto guard = StopGuard::start(target_pid()))
    stop_guard_ = std::move(*guard);
  else
    late_warnings_.push_back("cannot guard process " + std::to_string(target_pid()) +
                             " against staying stopped if gpubt dies: " + guard.error());
}

void Session::attach_loaded() {
  std::vector<size_t> still_pending;
  for (size_t i : pending_) {
    abi::ProbeSpec probe = spec_.probes[i];
    auto files = mapped_files_with_prefix(target_pid(), gpu_library_prefix(probe.target));
    if (files.empty())
      still_pending.push_back(i);
    else
      never_loaded_.erase(probe.target);
    for (const auto &file : files) {
      probe.target = file;
      auto evs = attach_named(probe, i);
      if (evs)
        for (auto &e : evs->fds)
          events_.push_back(std::move(e));
      if (probe.hidden)
        continue;
      if (!evs) {
        late_warnings_.push_back(evs.error());
        continue;
      }
      if (evs->count == 0 && evs->skipped.empty())
        late_warnings_.push_back(probe.name + ": no function matches '" + probe.func + "' in " +
                                 file);
      for (auto &why : evs->skipped)
        late_warnings_.push_back(probe.name + ": " + why);
      if (options_.verbose && evs->count > 0)
        std::fprintf(stderr, "Attaching %s:%s:%s\n",
                     probe.name.substr(0, probe.name.find(':')).c_str(), file.c_str(),
                     probe.func.c_str());
    }
  }
  pending_ = std::move(still_pending);
  if (pending_.empty())
    load_watch_.reset(); // while the process is stopped: no load can race the detach
}

void Session::continue_after_load(bool loaded) {
  // With the exit hold on, a stop may be either: a load stop seen first is handled here, and
  // release_held() lets the process go.
  if (!loaded && exit_hold_.empty())
    return;
  if (!wait_until_stopped(target_pid(), loaded ? 100 : 0))
    return;
  attach_loaded();
  if (exit_hold_.empty())
    kill(target_pid(), SIGCONT);
}

std::vector<std::string> Session::load_warnings() const {
  auto out = late_warnings_;
  for (const auto &alias : never_loaded_)
    out.push_back(alias + ": the traced program never loaded " + gpu_library_prefix(alias) +
                  "; probes on it did not fire");
  return out;
}

void Session::run_triggers(abi::AttachKind kind) {
  for (size_t i = 0; i < spec_.probes.size(); ++i)
    if (spec_.probes[i].kind == kind)
      if (auto st = run_once(progs_[i].get()); !st)
        std::fprintf(stderr, "ERROR: %s: %s\n", spec_.probes[i].name.c_str(), st.error().c_str());
}

Status Session::run_probe(size_t probe_index, const void *ctx, size_t ctx_size) {
  if (probe_index >= progs_.size() || !progs_[probe_index].valid())
    return make_error(spec_.probes.at(probe_index).name + " is not loaded");
  return run_once(progs_[probe_index].get(), ctx, ctx_size);
}

// As bpftrace: interval timers start after BEGIN ran, so `interval:s:1` fires a second after the
// values BEGIN set (nsecs - @start >= 1s).
void Session::run_begin() {
  run_triggers(abi::AttachKind::Begin);
  for (size_t i : intervals_) {
    auto evs = attach_named(spec_.probes[i], i);
    if (!evs) {
      std::fprintf(stderr, "ERROR: %s: %s\n", spec_.probes[i].name.c_str(), evs.error().c_str());
      continue;
    }
    for (auto &e : evs->fds)
      events_.push_back(std::move(e));
  }
  intervals_.clear();
}

int Session::handle_event_thunk(const void *data, size_t size) {
  if (size < sizeof(abi::EventHeader) || !handler_)
    return 0;
  abi::EventHeader h;
  memcpy(&h, data, sizeof(h));
  auto *payload = static_cast<const uint8_t *>(data) + sizeof(h);
  size_t psize = size - sizeof(h);
  switch (static_cast<abi::EventKind>(h.kind)) {
  case abi::EventKind::ClearMap:
    clear_map(h.index);
    break;
  case abi::EventKind::ZeroMap:
    zero_map(h.index);
    break;
  case abi::EventKind::WatchpointAttach:
    watch_address(h.index, payload, psize);
    return 0;
  case abi::EventKind::Exit:
    exit_requested_ = true;
    if (psize >= 8) { // exit(code)
      int64_t code;
      memcpy(&code, payload, 8);
      exit_code_ = int(code & 0xff);
    }
    handler_->on_event(h, payload, psize);
    return -1; // events after exit() are dropped
  default:
    break;
  }
  handler_->on_event(h, payload, psize);
  // A negative return ends ring_buffer__consume (the rest stays queued) so run() sees the signal.
  return interruptible_ && (stop_signalled() || print_maps_requested()) ? -EINTR : 0;
}

void Session::watch_address(uint32_t probe_index, const uint8_t *payload, size_t size) {
  if (probe_index >= spec_.probes.size() || size < 8)
    return;
  uint64_t address;
  memcpy(&address, payload, 8);
  const abi::ProbeSpec &p = spec_.probes[probe_index];
  // A function called again with the same address keeps its watchpoint (bpftrace's dedup).
  auto [it, fresh] = watched_.emplace(probe_index, address);
  if (!fresh && it->second == address) {
    if (!p.watch_async)
      kill(target_pid(), SIGCONT);
    return;
  }
  it->second = address;
  auto ev = open_breakpoint_event(address, p.watch_length, p.watch_mode, target_pid(), -1);
  if (!ev && ev.error().find(strerror(ENOSPC)) != std::string::npos)
    std::fprintf(stderr, "Failed to attach watchpoint probe. You are out of watchpoint registers.\n");
  else if (!ev)
    std::fprintf(stderr, "ERROR: %s: %s\n", p.name.c_str(), ev.error().c_str());
  else if (auto st = attach_bpf_to_event(ev->get(), progs_[probe_index].get()); !st)
    std::fprintf(stderr, "ERROR: %s: %s\n", p.name.c_str(), st.error().c_str());
  else
    events_.push_back(std::move(*ev));
  if (!p.watch_async) // the setup probe stopped the process
    kill(target_pid(), SIGCONT);
}

void Session::consume(EventHandler &handler) {
  if (!rb_ || exit_requested_)
    return;
  handler_ = &handler;
  ring_buffer__consume(rb_);
  handler_ = nullptr;
}

void Session::start() {
  if (child_)
    (void)child_->start();
}

std::vector<int> Session::wait_fds() const {
  std::vector<int> fds;
  if (rb_)
    fds.push_back(ring_buffer__epoll_fd(rb_));
  if (load_watch_)
    fds.push_back(load_watch_->epoll_fd());
  return fds;
}

int Session::exit_fd() const { return child_ ? child_->pidfd() : target_pidfd_.get(); }

std::optional<StopReason> Session::serve(EventHandler &handler) {
  interruptible_ = true;
  consume(handler);
  interruptible_ = false;
  if (exit_requested_)
    return StopReason::Exit;
  if (stop_signalled()) {
    stopped_by_signal_ = true;
    return StopReason::Signal;
  }
  if (take_print_maps_request())
    handler.print_all_maps();
  if (handler.output_failed())
    return StopReason::OutputFailed;
  if (child_ && child_->execed())
    snapshot_process_maps(child_->pid()); // keep its mappings for symbolizing after exit
  return std::nullopt;
}

void Session::after_wait(EventHandler &handler) {
  if (load_watch_)
    continue_after_load(load_watch_->take_loads());
  at_python_stop(handler);
  if (!exit_hold_.empty())
    release_held(target_pid());
}

StopReason Session::exited(EventHandler &handler) {
  consume(handler); // drain what the process produced before it exited
  if (child_)
    child_->exited();
  return exit_requested_ ? StopReason::Exit : StopReason::ChildExited;
}

StopReason Session::drain(EventHandler &handler) {
  consume(handler);
  return StopReason::Exit;
}

void Session::run_end(EventHandler &handler) {
  // After Ctrl-C the probes stop first and their queued events are dropped, as after exit():
  // under a flood of events (system() in a probe that its own commands fire) END would wait
  // behind them forever.
  if (stopped_by_signal_) {
    Progress progress(options_.progress, "detaching", options_.progress_after_ns);
    detach_all(events_, &progress, attached_);
    exit_requested_ = true;
  }
  // Events queued after exit() are dropped (no handler set), END's own events are delivered.
  if (rb_ && exit_requested_)
    ring_buffer__consume(rb_);
  exit_requested_ = false;
  run_triggers(abi::AttachKind::End);
  consume(handler);
}

// The globals map's word SLOT, summed over its per-CPU copies.
static uint64_t global_word(const MapData &globals, uint32_t slot) {
  uint64_t sum = 0;
  for (const auto &entry : globals)
    for (const auto &words : entry.values)
      if (words.size() >= 8 * (slot + 1)) {
        uint64_t n;
        std::memcpy(&n, words.data() + 8 * slot, 8);
        sum += n;
      }
  return sum;
}

uint64_t Session::lost_events() const {
  if (spec_.globals_map < 0)
    return 0;
  return global_word(read_map(spec_.globals_map), abi::GlobalLostEvents);
}

std::vector<uint64_t> Session::dropped_keys() const {
  std::vector<uint64_t> out(spec_.maps.size(), 0);
  if (spec_.globals_map < 0)
    return out;
  MapData globals = read_map(spec_.globals_map);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = global_word(globals, abi::global_map_drops_slot(uint32_t(i)));
  return out;
}

MapData Session::read_map(int map_index) const {
  return runtime::read_map(maps_.at(map_index).get(), spec_.maps.at(map_index));
}

void Session::clear_map(int map_index) {
  runtime::clear_map(maps_.at(map_index).get(), spec_.maps.at(map_index));
}

void Session::zero_map(int map_index) {
  runtime::zero_map(maps_.at(map_index).get(), spec_.maps.at(map_index));
}

} // namespace gpubt::runtime
