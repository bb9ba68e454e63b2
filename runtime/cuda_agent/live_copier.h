// GPU maps sent to gpubt while the program runs (issue 26; the record: runtime/abi/live_maps.h).
// A thread of its own copies every traced context's maps each period into pinned memory, holding
// none of the agent's locks while it copies. Where the context was prepared (-c: on the copier's
// thread right after the context's creation, before the program's first launch in it; an attach:
// after its idle check), with a kernel of its own on a non-blocking stream of its own into mapped
// memory: it never waits for the program's kernels, only for a free SM (a copy not done within
// kKernelWait is looked at again next period). Elsewhere (a context made during an attach, or whose
// preparation came too late or failed) with the Compute Sanitizer's copy (the maps are its
// allocations, which the driver's own copy did not read on the H100), which waits for running
// kernels: a spinning kernel stops the copies, never the program. Values are as the kernels left
// them at the copy: counters only grow between copies; the exact values come with the final
// results.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::agent {

class LiveCopier {
public:
  // One context's maps as they are placed now: device addresses and sizes.
  struct Source {
    CUcontext ctx = nullptr;
    int device = -1;
    std::vector<std::pair<CUdeviceptr, uint64_t>> maps;
  };
  // COLLECT: the sources to copy now and the finished contexts' images; called with the agent's
  // lock held, it must call begin_round (below) with the sources before returning them. SEND:
  // one record's bytes for gpubt; false when gpubt is gone (the copier stops).
  using Collect = std::function<std::vector<Source>(LiveCopier &copier, abi::AgentResults &finished)>;
  using Send = std::function<bool(const std::string &record)>;
  // REPORT: why copies fail, once (the copier goes on trying).
  using Report = std::function<void(const std::string &why)>;
  LiveCopier(std::chrono::milliseconds period, Collect collect, Send send, Report report);
  ~LiveCopier(); // joins the thread: call stop() first
  // Stops the thread, waiting up to a second; false if it is stuck in the driver, and then the
  // copier must be left alive (stop_copier does both).
  bool stop();

  // In COLLECT, the agent's lock held: the contexts this round may copy.
  void begin_round(const std::vector<Source> &sources);
  // Before CTX's memory is freed (the agent's lock may be held): the copier will not copy it
  // again, and a copy of it under way is waited for. False if that copy did not end within a
  // second, or a copy kernel of it still runs: the memory must then stay allocated. RELEASE: the copier's own stream and pinned
  // memory for CTX are freed too (not while the context is being destroyed: that frees them).
  bool forget(CUcontext ctx, bool release);
  // For -v: how many rounds ran, the longest, the largest record.
  std::string summary();
  // True on the copier's thread: the agent's callbacks ignore the driver calls made there.
  static bool on_copier_thread();
  // -c: CTX was just made (its creation callback, where a driver call of the caller's could
  // deadlock it): the copier's thread prepares it (prepare_live_copies) at once, while it runs
  // nothing yet; the program's first launch in it waits for that (await_live_copies).
  void prepare_soon(CUcontext ctx);

private:
  struct Staging { // the copier's own, per context
    CUstream stream = nullptr;   // prepare_live_copies' (kernel set), else the copier's own
    CUfunction kernel = nullptr; // null: the Sanitizer's copy
    void *host = nullptr;        // mapped
    CUdeviceptr device_host = 0; // its device address
    uint64_t size = 0;
    bool pending = false; // a copy kernel still running
  };
  void run();
  void prepare_asked(); // prepare_soon's contexts, on the copier's thread
  // The context current; error: which call failed.
  std::string copy(const Source &s, Staging &st);
  // After a copy: the maps' bytes, out of ST's pinned memory.
  static void take_image(const Source &s, const Staging &st, abi::DeviceImage &image);
  std::chrono::milliseconds period_;
  Collect collect_;
  Send send_;
  Report report_;
  bool reported_ = false;
  struct Phases { // of a round, ns: the copies to pinned memory, their images, the record
    uint64_t gpu = 0, host = 0, send = 0;
  };
  struct Stats {
    uint64_t rounds = 0, largest_record = 0;
    Phases total, longest;
    void add(const Phases &took, uint64_t record_bytes);
  } stats_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<CUcontext> copyable_; // this round's, less those forgotten
  CUcontext busy_ = nullptr;     // being copied (outside mu_)
  std::map<CUcontext, Staging> staging_;
  bool stop_ = false, finished_ = false;
  bool prepare_due_ = false; // prepare_soon asked since the thread last looked
  std::thread thread_;
};

// Loads CTX's copy kernel and runs it once, on a stream of its own: call it only where CTX runs
// nothing (at its creation, or after an idle check), since loading a module and a kernel's first
// launch wait for running kernels, and the program's launches with them. A context never
// prepared is copied with the Compute Sanitizer's copy, which waits for running kernels.
void prepare_live_copies(CUcontext ctx);
// CTX is being destroyed: what prepare_live_copies made goes with it (a preparation asked and
// not begun is dropped; one under way is waited for, a while).
void forget_live_copies(CUcontext ctx);
// Before the program launches in CTX (no agent lock held; costs an atomic load once CTX is
// prepared): if CTX's preparation (prepare_soon) is not done, waits for it, at most
// kPrepareWait; one not begun by then is dropped, and CTX gets the Sanitizer's copy.
// False: CTX was not prepared in time.
bool await_live_copies(CUcontext ctx);

// Stops COPIER (none: nothing) and frees it, or leaves it in place, stopped, if its thread is
// stuck in a copy (a kernel that runs on: the Compute Sanitizer's copy waits for it on the H100).
// SUMMARIZE: returns its summary() ("" without a copier or without SUMMARIZE).
std::string stop_copier(std::unique_ptr<LiveCopier> &copier, bool summarize);

} // namespace gpubt::agent
