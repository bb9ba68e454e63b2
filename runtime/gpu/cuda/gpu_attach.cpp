// Attaching to running CUDA processes' agents (see gpu_attach.h).
#include "runtime/gpu/cuda/gpu_attach.h"
#include "runtime/gpu/injector.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <poll.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/abi/agent_records.h"
#include "runtime/abi/agent_control.h"
#include "runtime/gpu/agent_peer.h"
#include "runtime/output/escape.h"
#include "runtime/output/event_printer.h"

namespace gpubt::runtime {
namespace {

using abi::Frame;

// An agent's answer to Attach: patching a big program's modules takes a while.
constexpr auto kAnswerTime = std::chrono::seconds(30);
constexpr int kSendMs = 10000;  // the Attach frame (a peer that stops reading)
constexpr int kFrameMs = 5000;  // one frame, once its first byte is there
// Printf records received and not yet printed: with host probes in the script they print at
// the end, and the processes sending them may be other users'. Past this, records are dropped
// and counted (as a full ring would).
constexpr size_t kMaxEventBytes = size_t(64) << 20;
// Sockets tried at once without -p: a few silent ones cost one answer time, not one each.
constexpr size_t kAttachWorkers = 32;
// Without -p, a socket whose attach failed (its agent busy with another gpubt, or not yet
// accepting) is tried again after this, doubled at each failure up to kRetryMost.
constexpr auto kRetryFirst = std::chrono::milliseconds(500);
constexpr auto kRetryMost = std::chrono::seconds(30);

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool process_exists(pid_t pid) {
  struct stat st;
  return stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0;
}

void merge_results(abi::AgentResults &into, abi::AgentResults from, pid_t pid) {
  for (auto &img : from.images)
    into.images.push_back(std::move(img));
  for (auto &m : from.messages)
    into.messages.push_back("process " + std::to_string(pid) + ": " + escape_control(m));
  into.kernel_names.merge(from.kernel_names);
  into.untraced += from.untraced;
  into.kernels.merge(from.kernels);
}

// PID as its own pid namespace numbers it (the last NSpid of /proc/PID/status): an agent in a
// container names its socket by that number.
pid_t innermost_pid(pid_t pid) {
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("NSpid:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      pid_t last = pid;
      for (pid_t p; fields >> p;)
        last = p;
      return last;
    }
  return pid;
}

// VAR's value in PID's environment as it started (empty: not set, or not readable).
std::string start_environment(pid_t pid, const std::string &var) {
  std::string env = read_file("/proc/" + std::to_string(pid) + "/environ");
  std::string key = var + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    std::string entry = env.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (entry.rfind(key, 0) == 0)
      return entry.substr(key.size());
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return "";
}

} // namespace

bool agent_in_timing_mode(pid_t pid) {
  return start_environment(pid, abi::kAgentModeVar) == abi::kTimingMode;
}

std::string no_agent_reason(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  struct stat st;
  if (stat(proc.c_str(), &st) != 0)
    return "no process " + std::to_string(pid);
  if (geteuid() != 0 && st.st_uid != geteuid())
    return "permission denied: process " + std::to_string(pid) + " belongs to uid " +
           std::to_string(st.st_uid) + "; only root or that user may attach to it";
  std::string injected = start_environment(pid, "CUDA_INJECTION64_PATH");
  if (injected.find("gpubt_agent") != std::string::npos)
    return "process " + std::to_string(pid) + " has gpubt's agent (CUDA_INJECTION64_PATH=" +
           injected + ") but no control socket in " + abi::agent_dirs_text(st.st_uid) +
           ": it has not initialized CUDA yet, was started by gpubt -c, or runs with another "
           "GPUBT_AGENT_DIR";
  auto agent = find_agent_library();
  return "process " + std::to_string(pid) + " was not started with gpubt's agent: start it with " +
         "CUDA_INJECTION64_PATH=" + (agent ? *agent : std::string("/path/to/libgpubt_agent.so")) +
         " in its environment (`gpubt agent env` prints the lines for a shell, a systemd unit "
         "and a container)";
}

Result<std::unique_ptr<GpuAttach>> GpuAttach::start(const abi::ProgramSpec &spec, Options options,
                                                    std::ostream &err) {
  abi::AgentConfig applied; // refused up front, before any process is looked for
  std::vector<std::string> unused;
  if (auto st = make_cuda_injector()->apply_settings({options.backend, options.verbose, true},
                                                     applied, unused);
      !st)
    return make_error(st.error());
  pid_t pid = options.pid;
  auto sockets = abi::find_agent_sockets(pid);
  if (pid > 0 && sockets.empty())
    if (pid_t inner = innermost_pid(pid); inner != pid) // a process in a container
      sockets = abi::find_agent_sockets(inner);
  if (pid > 0 && sockets.empty())
    return make_error(no_agent_reason(pid));
  auto run = prepare_gpu_run(spec, options.backend, options.verbose, true, options.live_ms,
                             options.watch_launches);
  if (!run)
    return make_error(run.error());
  std::unique_ptr<GpuAttach> g(new GpuAttach(std::move(*run)));
  g->options_ = std::move(options);
  g->err_ = &err;
  abi::AgentConfig config = g->run_.config;
  // Not an fd: "send the device's printf records live" (gpu_inject.cpp: only when probes write).
  config.events_fd = spec.device.features & abi::DeviceRecords ? 0 : -1;
  for (auto &h : config.host_maps) {
    auto fd = g->options_.host_map_fds.find(spec.device.maps.at(h.device_map).map_index);
    h.fd = -1;
    if (fd != g->options_.host_map_fds.end()) {
      h.fd = int(g->fds_.size());
      g->fds_.push_back(fd->second);
    }
  }
  std::vector<std::string> blobs{abi::write_agent_config(config)};
  for (const auto &c : config.cubins)
    blobs.push_back(read_file(c.path));
  g->attach_bytes_ = abi::pack_blobs(blobs);
  if (pid > 0) {
    // Another user may have put a socket of that name in a folder of their own: each is tried,
    // and only the process's own agent passes connect_to_agent's checks.
    std::string why;
    for (const auto &s : sockets) {
      auto st = g->attach(s, pid);
      if (st)
        break;
      why += (why.empty() ? "" : "; ") + st.error();
    }
    if (!g->attached_count_)
      return make_error("cannot attach to process " + std::to_string(pid) + ": " +
                        escape_control(why));
  } else {
    // All at once: one agent slow to answer (or a socket that never does) costs one wait.
    for (const auto &s : g->due(sockets))
      g->start_attach(s);
    g->wait_attaches();
    if (!g->attached_count_)
      err << "WARNING: no CUDA process with gpubt's agent is running yet: gpu probes attach to "
             "those that start (`gpubt agent env` says how to start one)\n";
  }
  g->thread_ = std::thread([p = g.get()] { p->loop(); });
  return g;
}

GpuAttach::~GpuAttach() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  stop_attaches();
}

std::vector<abi::AgentSocket> GpuAttach::due(const std::vector<abi::AgentSocket> &found) {
  std::set<pid_t> attached;
  {
    std::lock_guard<std::mutex> lock(mu_);
    attached = attached_pids_;
  }
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(queue_mu_);
  std::vector<abi::AgentSocket> out;
  for (const auto &s : found) {
    if (attached.count(s.pid))
      continue;
    auto [it, fresh] = tried_.try_emplace(s.path);
    if (!fresh && now < it->second.next)
      continue;
    it->second.next = std::chrono::steady_clock::time_point::max(); // until this try ends
    out.push_back(s);
  }
  return out;
}

bool GpuAttach::note_failure(const abi::AgentSocket &socket, bool gone) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  Retry &r = tried_[socket.path];
  bool first = r.failures++ == 0;
  if (gone)
    return false; // stays at max: never again
  auto wait = kRetryFirst * (1 << std::min(r.failures - 1, 16));
  r.next = std::chrono::steady_clock::now() +
           std::min<std::chrono::steady_clock::duration>(wait, kRetryMost);
  return first;
}

void GpuAttach::start_attach(const abi::AgentSocket &socket) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  queued_.push_back(socket);
  if (workers_.size() < kAttachWorkers && workers_.size() < queued_.size() + attaching_)
    workers_.emplace_back([this] { attach_worker(); });
  queue_cv_.notify_one();
}

void GpuAttach::attach_worker() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  for (;;) {
    queue_cv_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (stop_)
      return; // what is still queued is not tried: the trace is over
    abi::AgentSocket socket = queued_.front();
    queued_.pop_front();
    ++attaching_;
    lock.unlock();
    // Said at its first failure only: it is tried again meanwhile (note_failure).
    if (auto st = attach(socket, socket.pid);
        !st && note_failure(socket, !process_exists(socket.pid))) {
      std::lock_guard<std::mutex> out(mu_);
      // The socket's path is in it: anyone may name a folder /tmp/gpubt-agent-<escapes>.
      *err_ << "WARNING: process " << socket.pid << ": " << escape_control(st.error())
            << (stop_ ? "" : " (tried again until the trace ends)") << "\n";
    }
    lock.lock();
    --attaching_;
    queue_cv_.notify_all();
  }
}

void GpuAttach::wait_attaches() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_cv_.wait(lock, [&] { return queued_.empty() && attaching_ == 0; });
}

void GpuAttach::stop_attaches() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_); // no worker between its check and its wait
    stop_ = true;
  }
  queue_cv_.notify_all();
  for (auto &t : workers_)
    t.join();
  workers_.clear();
}

bool GpuAttach::wait_readable(int fd, std::chrono::steady_clock::time_point deadline) const {
  while (!stop_ && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) > 0)
      return true;
  }
  return false;
}

Status GpuAttach::attach(const abi::AgentSocket &socket, pid_t pid) {
  auto fd = connect_to_agent(socket, pid);
  if (!fd)
    return make_error(fd.error());
  if (auto st = abi::send_frame(fd->get(), Frame::Attach, attach_bytes_, fds_, kSendMs); !st)
    return st;
  auto deadline = std::chrono::steady_clock::now() + kAnswerTime;
  for (;;) {
    if (!wait_readable(fd->get(), deadline))
      return make_error(stop_ ? "the trace ended before the agent answered"
                              : "the agent did not answer in time");
    auto f = abi::recv_frame(fd->get(), kFrameMs);
    if (!f)
      return make_error("the agent did not answer (" + f.error() + ")");
    for (int extra : f->fds)
      close(extra);
    std::string text = escape_control(f->bytes); // another user's process may have written it
    if (f->type == Frame::Log) {
      std::lock_guard<std::mutex> lock(mu_);
      print_log(pid, text);
      continue;
    }
    if (f->type == Frame::Refused)
      return make_error(text);
    if (f->type != Frame::Attached)
      return make_error("an unexpected answer from the agent");
    auto link = std::make_unique<Link>();
    link->pid = pid;
    link->fd = std::move(*fd);
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.verbose)
      *err_ << "gpubt: attached to " << text << "\n";
    links_.push_back(std::move(link));
    attached_pids_.insert(pid);
    ++attached_count_;
    return Ok{};
  }
}

void GpuAttach::print_log(pid_t pid, const std::string &text) {
  if (text.rfind(abi::kAgentWarning, 0) == 0)
    *err_ << abi::kAgentWarning << "[" << pid << "] " << text.substr(strlen(abi::kAgentWarning))
          << "\n";
  else if (options_.verbose)
    *err_ << "gpubt: [" << pid << "] " << text << "\n";
}

void GpuAttach::read_frame(Link &link) {
  auto f = abi::recv_frame(link.fd.get(), kFrameMs);
  if (!f) {
    link.done = true;
    *err_ << "WARNING: process " << link.pid << " went away without sending its GPU maps\n";
    return;
  }
  for (int extra : f->fds)
    close(extra);
  std::lock_guard<std::mutex> lock(mu_);
  auto *frame = reinterpret_cast<const uint8_t *>(f->bytes.data());
  std::optional<abi::EventKind> latest_only; // only the latest counts: a slow reader keeps one
  for (auto kind : {abi::EventKind::LiveMaps, abi::EventKind::RunningLaunches})
    if (f->type == Frame::Events && abi::is_agent_record(kind, frame, f->bytes.size()))
      latest_only = kind;
  if (latest_only) {
    live_[{link.pid, *latest_only}] = std::move(f->bytes);
  } else if (f->type == Frame::Events) {
    // Whole records only: a frame that is not would swallow every later process's records.
    // A FinishedLaunches record (one a frame) is events too: every one runs launch-level probes.
    auto bytes = reinterpret_cast<const uint8_t *>(f->bytes.data());
    size_t whole =
        abi::is_agent_record(abi::EventKind::FinishedLaunches, frame, f->bytes.size())
            ? f->bytes.size()
            : whole_device_records(bytes, f->bytes.size());
    if (whole < f->bytes.size())
      *err_ << "WARNING: process " << link.pid << " sent " << f->bytes.size() - whole
            << " bytes that are not gpu probe records: left out\n";
    if (events_.size() + whole > kMaxEventBytes) {
      events_dropped_[link.pid] += whole;
    } else {
      if (events_.capacity() < kMaxEventBytes) // never a reallocation's two copies at once
        events_.reserve(kMaxEventBytes);       // (untouched capacity costs no memory)
      events_.insert(events_.end(), bytes, bytes + whole);
    }
  } else if (f->type == Frame::Log) {
    print_log(link.pid, escape_control(f->bytes));
  } else if (f->type == Frame::Results) {
    link.done = true;
    auto results = abi::parse_agent_results(f->bytes);
    if (results)
      merge_results(results_, std::move(*results), link.pid);
    else
      *err_ << "WARNING: process " << link.pid << ": " << results.error() << "\n";
  }
}

void GpuAttach::loop() {
  auto last_scan = std::chrono::steady_clock::now();
  while (!stop_) {
    std::vector<pollfd> fds;
    std::vector<Link *> polled;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto &l : links_)
        if (!l->done) {
          fds.push_back({l->fd.get(), POLLIN, 0});
          polled.push_back(l.get());
        }
    }
    if (poll(fds.data(), fds.size(), 200) > 0)
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
          read_frame(*polled[i]);
    auto now = std::chrono::steady_clock::now();
    if (options_.pid == 0 && now - last_scan > std::chrono::milliseconds(250)) {
      last_scan = now;
      for (const auto &s : due(abi::find_agent_sockets(0)))
        start_attach(s); // not waited for here: the attached ones' frames keep coming
    }
  }
}

std::vector<uint8_t> GpuAttach::take_events() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint8_t> out = std::exchange(events_, {});
  for (const auto &[pid, record] : live_)
    out.insert(out.end(), record.begin(), record.end());
  live_.clear();
  return out;
}

abi::AgentResults GpuAttach::finish(std::ostream &err) {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  stop_attaches(); // they give up at stop_: the links they made are detached below
  // A process that is gone cannot take the Detach, but what it sent before it went is still
  // in the socket: it is read below up to the end of the stream.
  for (auto &l : links_)
    if (!l->done)
      (void)abi::send_frame(l->fd.get(), Frame::Detach, "", {}, kSendMs);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (auto &l : links_)
    while (!l->done) {
      if (std::chrono::steady_clock::now() > deadline) {
        err << "WARNING: process " << l->pid << " did not send its GPU maps in time\n";
        break;
      }
      read_frame(*l);
    }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto &[pid, bytes] : events_dropped_)
    err << "WARNING: process " << pid << ": " << bytes << " bytes of gpu printf records were "
        << "dropped: gpubt holds at most " << (kMaxEventBytes >> 20)
        << " MiB of them before they print\n";
  return std::exchange(results_, {});
}

} // namespace gpubt::runtime
