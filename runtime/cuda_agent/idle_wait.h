// Waiting, with a time limit, for what a process's GPUs run to finish. cuCtxSynchronize has no
// limit: a persistent kernel (or a hung one) would block the waiting thread for ever, and the
// launching thread that waits for an idle GPU before patching holds every other launch meanwhile.
// So the streams are polled instead (cuStreamQuery does not block): the legacy default stream
// and every stream the program created (the agent follows their creation from the start, dormant
// or not). A thread's per-thread default stream is not seen (README: limits).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include <cuda.h>

namespace gpubt::agent {

class StreamSet {
public:
  void created(CUcontext ctx, CUstream stream);
  void destroyed(CUcontext ctx, CUstream stream);
  void context_destroyed(CUcontext ctx);
  // True once the work queued in CTX's streams has finished, within LIMIT; false when some
  // stream is still busy then. CTX need not be current.
  bool wait_for_idle(CUcontext ctx, std::chrono::milliseconds limit);

private:
  bool idle(CUcontext ctx); // mu_ held: no stream is destroyed while it is queried
  std::mutex mu_;
  std::map<CUcontext, std::set<CUstream>> streams_;
};

} // namespace gpubt::agent
