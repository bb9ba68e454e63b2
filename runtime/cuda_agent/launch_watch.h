// Which launch each stream runs now (issue 26: gpu:hang probes, --metrics' running kernel age;
// the record: runtime/abi/running_launches.h). Every launch is numbered per stream and logged at
// LAUNCH_BEGIN; at LAUNCH_END the stream itself is asked to write the launch's number into a
// word of mapped pinned memory once the kernel finished (one stream memory operation, no host
// sync). The word is the stream's last finished launch, so the launch after it is the one
// running, or the stream is idle. A thread of its own reads the words every period (no driver
// call: a spinning kernel cannot stop it) and sends the oldest unfinished launch of each stream.
// Launches made while their stream is captured into a graph are not launches: ignored. A CUDA
// graph replay is watched as one launch (GRAPHS_LAUNCH_BEGIN/END, the word written after the
// graph): named by its first kernel node, with its count of kernel nodes; which node runs is not
// known.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <cuda.h>
#include <sanitizer.h>

#include "runtime/abi/running_launches.h"
#include "runtime/cuda_agent/periodic_thread.h"

namespace gpubt::agent {

class LaunchWatch {
public:
  // SEND: one record for gpubt; false when gpubt is gone (the thread stops).
  using Send = std::function<bool(const std::string &record)>;
  LaunchWatch() = default;
  ~LaunchWatch() { stop(); }
  LaunchWatch(const LaunchWatch &) = delete;
  LaunchWatch &operator=(const LaunchWatch &) = delete;

  // Watching from now on (a session's start), sending every PERIOD; stop() forgets every
  // launch and joins the thread (it never waits for the GPU, and waits at most a second for a
  // send: a gpubt that stopped reading must not hold the program's exit; such a thread is
  // left behind and ends once its send does). The agent's one watch lives as long as it does,
  // so callbacks on any thread may call it, active or not.
  void start(std::chrono::milliseconds period, Send send);
  void stop();
  bool active() const { return active_; }

  // LAUNCH_BEGIN / LAUNCH_END of a launch on the calling thread (not from graph replays).
  void launching(const Sanitizer_LaunchData &d);
  void launched(const Sanitizer_LaunchData &d);
  // A graph replay on the calling thread: GRAPHS_LAUNCH_BEGIN, each kernel node's
  // NODE_LAUNCH_BEGIN in between (names the launch by its first), GRAPHS_LAUNCH_END.
  void graph_launching(const Sanitizer_GraphLaunchData &d);
  void graph_node(const Sanitizer_LaunchData &node);
  void graph_launched(const Sanitizer_GraphLaunchData &d);
  // Before STREAM or CTX goes away: its launches are forgotten (its words stay allocated).
  void stream_destroyed(CUcontext ctx, CUstream stream);
  void context_destroyed(CUcontext ctx);

  // What runs now, as sent (for tests and the thread).
  abi::RunningLaunches running();

private:
  struct Launch {
    uint64_t seq;
    uint64_t launched_ns;
    uint32_t grid[3], block[3];
    std::string kernel;
    uint32_t graph_kernels = 0; // a graph replay: its kernel nodes seen (kernel: the first's)
    bool graph = false;
  };
  struct Stream {
    CUcontext ctx = nullptr;
    uint32_t device = 0;
    volatile uint64_t *word = nullptr; // the GPU writes the last finished launch's number
    CUdeviceptr word_device = 0;
    uint64_t next_seq = 1;
    bool writing = true;         // false once a stream write failed: its launches are not logged
    std::deque<Launch> unfinished; // as logged; the front ones drop as the word passes them
    uint64_t finished_seen = 0;    // the word at the last look, and when it changed
    uint64_t finished_seen_ns = 0;
  };
  // Per context: slabs of mapped pinned words, one per stream.
  struct Words {
    std::vector<std::pair<volatile uint64_t *, CUdeviceptr>> free;
  };
  bool new_word(CUcontext ctx, Stream &s);
  // Logs a launch on (CTX, STREAM) as the thread's current one; false when the stream's
  // launches are not logged.
  bool log_launch(CUcontext ctx, CUstream stream, uint32_t device, Launch launch);
  // After the thread's current launch on STREAM: the stream writes its number once it finished.
  void mark_finished(CUcontext ctx, CUstream stream);

  std::mutex mu_;
  std::map<std::pair<CUcontext, CUstream>, Stream> streams_;
  std::map<CUcontext, Words> words_;
  std::atomic<bool> active_{false};
  PeriodicThread sender_;
};

} // namespace gpubt::agent
