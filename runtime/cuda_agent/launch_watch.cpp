#include "runtime/cuda_agent/launch_watch.h"

#include <algorithm>
#include <ctime>
#include <utility>
#include <unistd.h>

#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {
namespace {

constexpr size_t kSlabWords = 512;
// A stream whose word stopped moving keeps at most this many launches logged; the ones dropped
// from the back are counted in `later` only as "at least".
constexpr size_t kMaxLogged = 4096;

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// The launch this thread is making (LAUNCH_BEGIN to LAUNCH_END): two threads may launch on one
// stream, so the number is the thread's, not the stream's latest.
thread_local uint64_t t_launch_seq = 0;

// The graph replay this thread is making (GRAPHS_LAUNCH_BEGIN to END), for its nodes' names.
struct PendingGraph {
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  uint64_t seq = 0;
};
thread_local PendingGraph t_graph;

bool capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  auto is_capturing = GPUBT_DRIVER(cuStreamIsCapturing);
  return !is_capturing || is_capturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

} // namespace

void LaunchWatch::start(std::chrono::milliseconds period, Send send) {
  stop();
  active_ = true;
  sender_.start(period, "watch", [this, send = std::move(send)] {
    return send(abi::running_launches_record(running()));
  });
}

void LaunchWatch::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_)
      return;
    active_ = false;
    streams_.clear(); // their words are not reused: a queued write may still land in one
  }
  sender_.stop();
}

bool LaunchWatch::new_word(CUcontext ctx, Stream &s) {
  Words &w = words_[ctx];
  if (w.free.empty()) {
    void *host = nullptr;
    CUdeviceptr device = 0;
    if (GPUBT_DRIVER(cuMemHostAlloc)(&host, kSlabWords * 8, CU_MEMHOSTALLOC_DEVICEMAP) !=
        CUDA_SUCCESS)
      return false;
    if (GPUBT_DRIVER(cuMemHostGetDevicePointer)(&device, host, 0) != CUDA_SUCCESS) {
      GPUBT_DRIVER(cuMemFreeHost)(host);
      return false;
    }
    for (size_t i = kSlabWords; i-- > 0;)
      w.free.push_back({static_cast<volatile uint64_t *>(host) + i, device + 8 * i});
  }
  std::tie(s.word, s.word_device) = w.free.back();
  w.free.pop_back();
  *s.word = 0;
  return true;
}

bool LaunchWatch::log_launch(CUcontext ctx, CUstream stream, uint32_t device, Launch launch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_)
    return false;
  Stream &s = streams_[{ctx, stream}];
  if (!s.word) {
    s.ctx = ctx;
    s.device = device;
    if (!new_word(ctx, s))
      s.writing = false;
  }
  if (!s.writing)
    return false;
  if (s.unfinished.size() >= kMaxLogged)
    s.unfinished.pop_back(); // the newest go first: the oldest is the one that may hang
  t_launch_seq = launch.seq = s.next_seq++;
  s.unfinished.push_back(std::move(launch));
  return true;
}

void LaunchWatch::launching(const Sanitizer_LaunchData &d) {
  if (!active_ || capturing(d.stream))
    return;
  log_launch(d.context, d.stream, uint32_t(d.device),
             {0, monotonic_ns(), {d.gridDim_x, d.gridDim_y, d.gridDim_z},
              {d.blockDim_x, d.blockDim_y, d.blockDim_z},
              d.functionName ? d.functionName : ""});
}

void LaunchWatch::launched(const Sanitizer_LaunchData &d) { mark_finished(d.context, d.stream); }

void LaunchWatch::graph_launching(const Sanitizer_GraphLaunchData &d) {
  t_graph = {};
  // No driver call here (a capture check would be one): a replay into a capturing stream is
  // let go at GRAPHS_LAUNCH_END, before its write is asked for.
  if (!active_ || d.isGraphUpload)
    return;
  Launch l{0, monotonic_ns(), {1, 1, 1}, {1, 1, 1}, "", 0, true};
  if (log_launch(d.context, d.stream, 0, std::move(l)))
    t_graph = {d.context, d.stream, t_launch_seq};
}

void LaunchWatch::graph_node(const Sanitizer_LaunchData &node) {
  if (!t_graph.seq || !active_)
    return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find({t_graph.ctx, t_graph.stream});
  if (it == streams_.end())
    return;
  for (auto l = it->second.unfinished.rbegin(); l != it->second.unfinished.rend(); ++l)
    if (l->seq == t_graph.seq) {
      if (l->graph_kernels++ == 0) {
        l->kernel = node.functionName ? node.functionName : "";
        l->grid[0] = node.gridDim_x, l->grid[1] = node.gridDim_y, l->grid[2] = node.gridDim_z;
        l->block[0] = node.blockDim_x, l->block[1] = node.blockDim_y, l->block[2] = node.blockDim_z;
        it->second.device = uint32_t(node.device);
      }
      return;
    }
}

void LaunchWatch::graph_launched(const Sanitizer_GraphLaunchData &d) {
  PendingGraph g = std::exchange(t_graph, {});
  if (!g.seq || d.isGraphUpload)
    return;
  if (capturing(d.stream)) { // the graph became a node of another: not a launch
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find({d.context, d.stream});
    if (it != streams_.end())
      std::erase_if(it->second.unfinished, [&](const Launch &l) { return l.seq == g.seq; });
    t_launch_seq = 0;
    return;
  }
  mark_finished(d.context, d.stream);
}

void LaunchWatch::mark_finished(CUcontext ctx, CUstream stream) {
  uint64_t seq = std::exchange(t_launch_seq, 0);
  if (!active_ || !seq)
    return;
  CUdeviceptr word;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find({ctx, stream});
    if (it == streams_.end() || !it->second.writing)
      return;
    word = it->second.word_device;
  }
  // After the launch in the stream's order: written when the kernel (or graph) finished.
  if (GPUBT_DRIVER(cuStreamWriteValue64)(stream, word, seq, CU_STREAM_WRITE_VALUE_DEFAULT) !=
      CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find({ctx, stream});
    if (it != streams_.end()) {
      it->second.writing = false; // its word stops: forget its launches rather than misname one
      it->second.unfinished.clear();
    }
  }
}

void LaunchWatch::stream_destroyed(CUcontext ctx, CUstream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase({ctx, stream}); // the word is not reused: a write to it may still be queued
}

void LaunchWatch::context_destroyed(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = streams_.begin(); it != streams_.end();)
    it = it->first.first == ctx ? streams_.erase(it) : std::next(it);
  words_.erase(ctx); // freed with the context
}

abi::RunningLaunches LaunchWatch::running() {
  abi::RunningLaunches r;
  r.pid = uint32_t(getpid());
  r.sent_ns = monotonic_ns();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &[key, s] : streams_) {
    if (!s.word)
      continue;
    uint64_t finished = *s.word;
    if (finished != s.finished_seen) {
      s.finished_seen = finished;
      s.finished_seen_ns = r.sent_ns;
    }
    while (!s.unfinished.empty() && s.unfinished.front().seq <= finished)
      s.unfinished.pop_front();
    if (s.unfinished.empty())
      continue;
    const Launch &l = s.unfinished.front();
    abi::RunningLaunch out;
    out.seq = l.seq;
    out.stream = reinterpret_cast<uint64_t>(key.second);
    // It started once the launch before it finished: seen then, or it was launched later.
    out.since_ns = std::max(l.launched_ns, s.finished_seen_ns);
    std::copy(l.grid, l.grid + 3, out.grid);
    std::copy(l.block, l.block + 3, out.block);
    out.device = s.device;
    out.later = uint32_t(s.unfinished.size() - 1);
    // A graph replay: which of its kernel nodes runs is not known, unless it has only one.
    out.exact = !l.graph || l.graph_kernels <= 1;
    out.graph_kernels = l.graph ? std::max<uint32_t>(l.graph_kernels, 1) : 0;
    out.kernel = l.graph && l.kernel.empty() ? "(CUDA graph)" : l.kernel;
    r.launches.push_back(std::move(out));
  }
  return r;
}

} // namespace gpubt::agent
