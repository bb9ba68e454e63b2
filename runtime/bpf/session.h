// One tracing run: maps and programs in the kernel, probes attached, the event loop, END, and
// map snapshots for the printers. runtime/run's tracer calls, in order:
//   create -> attach -> run_begin -> start -> its loop (serve, wait, after_wait, exited) ->
//   run_end -> read_map (printing)
#pragma once
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/bpf/attach.h"
#include "runtime/process/child_process.h"
#include "runtime/bpf/dlopen_watch.h"
#include "runtime/bpf/stop_guard.h"
#include "runtime/abi/map_data.h"
#include "runtime/abi/unique_fd.h"
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

struct ring_buffer;

namespace gpubt::runtime {

struct SessionOptions {
  int pid = -1;        // -p PID: uprobes filtered to it; the session ends when it exits
  std::string command; // -c CMD: spawned held back, started by run(); its exit ends the session
  bool child_stdout_to_stderr = false; // CMD's stdout is our stderr (see ChildProcess::spawn)
  bool verbose = false; // -v: probes attached late (see attach()) say so on stderr
  // Where a long attach says how far it is (progress.h); null: nowhere (-q).
  std::ostream *progress = nullptr;
  uint64_t progress_after_ns = Progress::kAfterNs;
  // Maps (indexes into spec.maps) the -c child inherits an fd of: the GPU agent in it reads
  // them. The fds are made before the child is forked; inherited_fds() says their numbers.
  std::vector<int> inherited_maps;
};

// What the event loop hands out: every event, after the session did its own part (a clear or
// zero already done, exit() already ending the loop). Payloads point into the ring buffer: copy
// to keep them. runtime/output's EventPrinter decodes the ones that print.
class EventHandler {
public:
  virtual ~EventHandler() = default;
  virtual void on_event(const abi::EventHeader &header, const uint8_t *payload, size_t size) = 0;
  virtual bool output_failed() const { return false; } // ends the trace: its output is lost
  virtual void print_all_maps() {} // SIGUSR1
};

enum class StopReason { Exit, Signal, ChildExited, OutputFailed };

class Session {
public:
  // Creates maps, spawns the -c child (held back), writes the globals, loads every program.
  static Result<std::unique_ptr<Session>> create(const abi::ProgramSpec &spec,
                                                 SessionOptions options);
  ~Session();

  // Attaches every probe (BEGIN/END attach to nothing: run_begin/run_end run them once, see
  // triggers.h, but they count). Returns how many events were attached, wildcards expanded, which
  // is the N of bpftrace's "Attaching N probes...". A uprobe pattern that matches nothing is
  // skipped, as bpftrace does, with a line in unmatched().
  // With -c/-p, a probe on cudart/cuda/hip that the program neither links nor maps yet is
  // pending: it is attached when the program loads a matching library (dlopen_watch.h), before
  // that library's constructors run. N counts each pending probe once, as written (a wildcard is
  // expanded only then); pending() lists them and load_warnings() says, at the end, which never
  // fired because the library never came.
  Result<int> attach();
  const std::vector<std::string> &pending() const { return pending_lines_; }
  std::vector<std::string> load_warnings() const;
  const std::vector<std::string> &unmatched() const { return unmatched_; }
  // Wildcard matches the kernel refused to probe, "PROBE: func: reason" (warnings).
  const std::vector<std::string> &skipped() const { return skipped_; }

  void run_begin(); // fires BEGIN, then starts the interval timers
  void start();     // starts the -c child
  // The event loop is the tracer's (runtime/run/tracer.h), which waits on wait_fds() and
  // exit_fd() with the agents' and calls these around each wait. serve(): the events queued,
  // then why the loop ends (exit(), SIGINT/SIGTERM, the output failed), if it does; SIGUSR1
  // prints every map. after_wait(): libraries loaded, python stops, exit holds. exited(): the
  // exit fd said the process ended: its last events, and how the loop ends.
  std::vector<int> wait_fds() const; // the ring buffer's and the load watch's epoll fds
  int exit_fd() const;               // the -c child's or -p process's pidfd, else -1
  std::optional<StopReason> serve(EventHandler &handler);
  // Delivers what BEGIN queued and stops (Exit): bpftrace's run of a program whose only probes
  // are begin/end, which ends by itself after begin (instead of the loop).
  StopReason drain(EventHandler &handler);
  void after_wait(EventHandler &handler);
  StopReason exited(EventHandler &handler);
  void run_end(EventHandler &handler); // fires END and delivers its events
  // Runs probe PROBE_INDEX (a gpu:hang) once with CTX (triggers.h); its events come through
  // serve() or run_end() as any probe's.
  Status run_probe(size_t probe_index, const void *ctx, size_t ctx_size);

  MapData read_map(int map_index) const;
  uint64_t lost_events() const; // events dropped because the ring buffer was full
  // Per map of spec().maps: new keys its full map refused (0 for maps without a count).
  std::vector<uint64_t> dropped_keys() const;
  void clear_map(int map_index);
  void zero_map(int map_index);
  int map_fd(int map_index) const { return maps_.at(map_index).get(); }
  // SessionOptions::inherited_maps -> the fd number each has in the child.
  const std::map<int, int> &inherited_fds() const { return inherited_fds_; }

  int child_pid() const { return child_ ? child_->pid() : -1; }
  // exit(code)'s code (bpftrace 0.22), once a probe called it; 0 for exit().
  int exit_code() const { return exit_code_; }
  // How the -c child ended, once run() returned ChildExited (see ChildProcess::exit_info).
  std::optional<ChildExit> child_exit() const {
    return child_ ? child_->exit_info() : std::nullopt;
  }
  int target_pid() const;        // -p or -c pid, else -1
  // For UserSym/func values of the target process; safe on another thread while late probes
  // attach (it reads the function names under their lock).
  Symbolizer symbolizer() const;
  // The spec as the main thread sees it; only for the main thread: a late attach (a library the
  // process loads) appends to its probe names.
  const abi::ProgramSpec &spec() const { return spec_; }
  // A copy of the spec taken under the names' lock, for another thread (--metrics' scrapes).
  abi::ProgramSpec spec_snapshot() const;

  int handle_event_thunk(const void *data, size_t size); // the ring buffer callback; internal

private:
  Session(const abi::ProgramSpec &spec, SessionOptions options);
  Status setup();
  void consume(EventHandler &handler);
  void run_triggers(abi::AttachKind kind); // BEGIN or END programs, once each
  std::vector<size_t> attach_order() const; // probe indexes, in the order they attach
  // A WatchpointAttach event: the function-form watchpoint PROBE_INDEX watches the address.
  void watch_address(uint32_t probe_index, const uint8_t *payload, size_t size);
  bool defer_until_loaded(size_t probe_index); // pending_ (starts the load watch)
  void attach_loaded();                        // the process is stopped at a library load
  void continue_after_load(bool loaded);       // attach_loaded() if stopped there, then SIGCONT
  void setup_python();                         // pystack: the python_procs map and its stops
  void at_python_stop(EventHandler &handler);  // stopped at a python_procs.h stop: map, frames
  // attach_probe() with the names' lock held: it appends to function_names_ and spec_'s
  // probe names, which other threads read.
  Result<Attached> attach_named(const abi::ProbeSpec &probe, size_t probe_index,
                                Progress *progress = nullptr);

  abi::ProgramSpec spec_;
  SessionOptions options_;
  std::unique_ptr<ChildProcess> child_;
  UniqueFd target_pidfd_; // -p
  std::vector<UniqueFd> maps_;
  std::map<int, int> inherited_fds_; // map index -> its fd number in the child
  std::vector<UniqueFd> progs_; // one per spec probe
  std::vector<UniqueFd> events_;
  std::map<uint32_t, uint64_t> watched_; // function-form watchpoints: the address each watches
  std::vector<std::string> unmatched_, skipped_;
  FunctionNames function_names_; // attach cookies index this (func)
  // Guards function_names_.funcs and spec_.probe_names, appended to by late attaches while the
  // metrics thread reads them. Behind a pointer: the symbolizers hold it.
  std::shared_ptr<std::mutex> names_mutex_ = std::make_shared<std::mutex>();
  ring_buffer *rb_ = nullptr;
  EventHandler *handler_ = nullptr;
  bool exit_requested_ = false;
  int exit_code_ = 0;
  // serve(): a signal stops the event loop even while events keep coming (a probe whose system()
  // makes the events that fire it); stopped_by_signal_: serve() ended it that way.
  bool interruptible_ = false;
  bool stopped_by_signal_ = false;
  std::vector<UniqueFd> exit_hold_; // kname(): the -c child stops at exit() (exit_hold.h)
  std::set<std::string> warned_aliases_; // cudart/cuda/hip resolved from the system only
  std::set<std::string> told_aliases_;   // -v: cudart/cuda/hip whose file was said
  int attached_ = 0;                     // what attach() returned: detached at the end
  std::vector<size_t> pending_;          // spec probes waiting for their library (attach())
  std::vector<size_t> intervals_;        // interval probes attach() left for run_begin()
  std::vector<std::string> pending_lines_, late_warnings_;
  std::set<std::string> never_loaded_; // aliases that had pending probes, until one loads
  std::unique_ptr<LoadWatch> load_watch_;
  std::unique_ptr<StopGuard> stop_guard_; // -p: before a hold is armed (stop_guard.h)
  void guard_stops();
  bool load_watch_failed_ = false;
  bool python_registered_ = false; // the target's interpreter is in the python_procs map
  bool python_poll_ = false; // -c runs no python itself: look for one after each loop
};

} // namespace gpubt::runtime
