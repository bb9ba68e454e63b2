#include "runtime/cuda_agent/live_copier.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "runtime/abi/live_maps.h"
#include "runtime/cuda_agent/agent_thread.h"
#include "runtime/cuda_agent/driver_api.h"
#include "runtime/cuda_agent/live_prepare.h"

#include <sanitizer.h>

namespace gpubt::agent {
namespace {

thread_local bool g_on_copier_thread = false;

// How long forget() waits for a copy under way: a copy on the copier's own stream does not wait
// for kernels, so only a GPU in trouble makes it take this long.
constexpr std::chrono::seconds kCopyLimit{1};
// How long a copy kernel may take before the round goes on without it.
constexpr std::chrono::milliseconds kKernelWait{200};

// dst[i] = src[i] for i < words, grid-stride (src: a map in device memory, dst: mapped host).
const char *kCopyPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry gpubt_copy(.param .u64 src, .param .u64 dst, .param .u64 words)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u64 %rd3, [words];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;
  mul.wide.u32 %rd6, %r4, %r2;
$loop:
  setp.ge.u64 %p1, %rd4, %rd3;
  @%p1 bra $done;
  shl.b64 %rd7, %rd4, 3;
  add.u64 %rd8, %rd1, %rd7;
  ld.volatile.global.u64 %rd9, [%rd8];
  add.u64 %rd10, %rd2, %rd7;
  st.global.u64 [%rd10], %rd9;
  add.u64 %rd4, %rd4, %rd6;
  bra $loop;
$done:
  ret;
}
)";

struct CopyKernel {
  CUstream stream = nullptr;
  CUfunction kernel = nullptr;
};
std::mutex g_kernels_mu;
std::map<CUcontext, CopyKernel> g_kernels; // prepare_live_copies'

// -c's preparations (prepare_soon). Why on the copier's thread, right after the context's
// creation, and why the program's first launch waits for it:
// - not in the creation callback itself: the driver is inside the program's cuCtxCreate (or
//   primary context's init) there, and a driver call of ours on that thread could deadlock it;
//   another thread's calls just wait until the creation returns (the clock service's
//   ClockProbe::create, gpu_clock.cpp, loads its module the same way, and has on the H100/H200);
// - loading a module and a kernel's first launch wait for the context's running kernels (and the
//   program's later launches wait behind them): done while the program has launched nothing in
//   the context, they wait for nothing, and nothing waits long for them. Done later, a spinning
//   kernel that waits for a later launch of the program (a producer on another stream) would
//   deadlock the job; so the program's first launch in the context waits for the preparation, at
//   most kPrepareWait (once per context, next to the driver's own start-up), and a preparation
//   not begun by then is dropped (the context gets the Sanitizer's copy, as before). A launch
//   waits only where launch callbacks are on (gpu:hang, or a module with probe code loaded):
//   before that, a kernel of a module without probes may run first, and the preparation then
//   waits for it (the program's kernels that wait on a later launch are the one risk left).
// - one under way at kPrepareWait is left to end (its module is loaded on an idle context, so
//   only its first launch can wait, behind the program's first kernel: a short while, unless that
//   kernel hangs, and then the program's next launches were waiting for it anyway).
// The copier's thread only ever waits for a copy (kKernelWait, or the Sanitizer's copy of a
// context prepared too late), so an asked preparation begins at once unless such a copy of
// another context is under way.
constexpr std::chrono::milliseconds kPrepareWait{500};
PrepareQueue g_prep{kPrepareWait};

} // namespace

void prepare_live_copies(CUcontext ctx) {
  {
    std::lock_guard<std::mutex> lock(g_kernels_mu);
    if (g_kernels.count(ctx))
      return;
  }
  bool was = std::exchange(g_on_copier_thread, true); // the agent's callbacks ignore these calls
  CopyKernel k;
  CUmodule module = nullptr;
  bool ok = GPUBT_DRIVER(cuCtxPushCurrent)(ctx) == CUDA_SUCCESS;
  if (ok) {
    uint64_t none = 0;
    CUdeviceptr null = 0;
    void *args[] = {&null, &null, &none};
    ok = GPUBT_DRIVER(cuStreamCreate)(&k.stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
         GPUBT_DRIVER(cuModuleLoadData)(&module, kCopyPtx) == CUDA_SUCCESS &&
         GPUBT_DRIVER(cuModuleGetFunction)(&k.kernel, module, "gpubt_copy") == CUDA_SUCCESS &&
         // Its first launch now (lazy loading would load it then, under whatever runs).
         GPUBT_DRIVER(cuLaunchKernel)(k.kernel, 1, 1, 1, 32, 1, 1, 0, k.stream, args,
                                      nullptr) == CUDA_SUCCESS &&
         GPUBT_DRIVER(cuStreamSynchronize)(k.stream) == CUDA_SUCCESS;
    CUcontext popped;
    GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
  }
  g_on_copier_thread = was;
  if (ok) {
    std::lock_guard<std::mutex> lock(g_kernels_mu);
    g_kernels[ctx] = k;
  }
}

void forget_live_copies(CUcontext ctx) {
  g_prep.forget(ctx, kCopyLimit);
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  g_kernels.erase(ctx);
}

bool await_live_copies(CUcontext ctx) { return g_prep.await(ctx); }

void LiveCopier::prepare_soon(CUcontext ctx) {
  g_prep.ask(ctx);
  std::lock_guard<std::mutex> lock(mu_);
  prepare_due_ = true;
  cv_.notify_all();
}

void LiveCopier::prepare_asked() {
  while (void *ctx = g_prep.begin()) {
    prepare_live_copies(static_cast<CUcontext>(ctx));
    if (!g_prep.end(ctx)) { // destroyed meanwhile: the handle may be a new context's
      std::lock_guard<std::mutex> lock(g_kernels_mu);
      g_kernels.erase(static_cast<CUcontext>(ctx));
    }
  }
}

LiveCopier::LiveCopier(std::chrono::milliseconds period, Collect collect, Send send,
                       Report report)
    : period_(period), collect_(std::move(collect)), send_(std::move(send)),
      report_(std::move(report)), thread_([this] { run(); }) {}

LiveCopier::~LiveCopier() {
  if (thread_.joinable())
    thread_.join();
}

bool LiveCopier::stop() {
  std::unique_lock<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
  return cv_.wait_for(lock, kCopyLimit, [&] { return finished_; });
}

std::string stop_copier(std::unique_ptr<LiveCopier> &copier, bool summarize) {
  std::string summary = copier && summarize ? copier->summary() : "";
  if (copier && copier->stop())
    copier.reset();
  // Else its thread is stuck in a copy: the copier stays, so that forget() still keeps the
  // memory it copies from.
  return summary;
}

bool LiveCopier::on_copier_thread() { return g_on_copier_thread; }

void LiveCopier::Stats::add(const Phases &took, uint64_t record_bytes) {
  ++rounds;
  total.gpu += took.gpu, total.host += took.host, total.send += took.send;
  longest.gpu = std::max(longest.gpu, took.gpu);
  longest.host = std::max(longest.host, took.host);
  longest.send = std::max(longest.send, took.send);
  largest_record = std::max(largest_record, record_bytes);
}

std::string LiveCopier::summary() {
  std::lock_guard<std::mutex> lock(mu_);
  auto ms = [](uint64_t ns) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f", ns / 1e6);
    return std::string(s);
  };
  auto phase = [&](const char *name, uint64_t total, uint64_t longest) {
    return std::string(name) + " " + ms(stats_.rounds ? total / stats_.rounds : 0) + "/" +
           ms(longest) + " ms";
  };
  return "live map copies: " + std::to_string(stats_.rounds) + " rounds every " +
         std::to_string(period_.count()) + " ms; mean/longest a round: " +
         phase("GPU copy", stats_.total.gpu, stats_.longest.gpu) + ", " +
         phase("host image", stats_.total.host, stats_.longest.host) + ", " +
         phase("record and send", stats_.total.send, stats_.longest.send) +
         "; the largest record " + std::to_string((stats_.largest_record + 1023) / 1024) + " KiB";
}

void LiveCopier::begin_round(const std::vector<Source> &sources) {
  std::lock_guard<std::mutex> lock(mu_);
  copyable_.clear();
  for (const auto &s : sources)
    copyable_.insert(s.ctx);
}

bool LiveCopier::forget(CUcontext ctx, bool release) {
  std::unique_lock<std::mutex> lock(mu_);
  copyable_.erase(ctx);
  if (!cv_.wait_for(lock, kCopyLimit, [&] { return busy_ != ctx; }))
    return false;
  auto it = staging_.find(ctx);
  if (it == staging_.end())
    return true;
  Staging &st = it->second;
  // A copy kernel still running reads the maps and writes the pinned memory: both stay.
  if (st.pending && GPUBT_DRIVER(cuStreamQuery)(st.stream) != CUDA_SUCCESS)
    return false;
  if (release) {
    if (st.stream && !st.kernel) // the prepared one stays for the next session
      GPUBT_DRIVER(cuStreamDestroy)(st.stream);
    if (st.host)
      GPUBT_DRIVER(cuMemFreeHost)(st.host);
  }
  staging_.erase(it);
  return true;
}

std::string LiveCopier::copy(const Source &s, Staging &st) {
  uint64_t total = 0;
  for (const auto &[address, size] : s.maps)
    total += (size + 7) / 8 * 8;
  if (!st.stream) {
    {
      std::lock_guard<std::mutex> lock(g_kernels_mu);
      if (auto it = g_kernels.find(s.ctx); it != g_kernels.end())
        st.stream = it->second.stream, st.kernel = it->second.kernel;
    }
    if (!st.stream &&
        GPUBT_DRIVER(cuStreamCreate)(&st.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
      return st.stream = nullptr, "cuStreamCreate";
  }
  if (st.pending) { // an earlier copy kernel: its memory is not to be written again before it ends
    if (GPUBT_DRIVER(cuStreamQuery)(st.stream) != CUDA_SUCCESS)
      return "busy";
    st.pending = false;
  }
  if (st.size < total) {
    if (st.host)
      GPUBT_DRIVER(cuMemFreeHost)(st.host);
    st.host = nullptr, st.size = 0;
    if (GPUBT_DRIVER(cuMemHostAlloc)(&st.host, total,
                                     CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
            CUDA_SUCCESS ||
        GPUBT_DRIVER(cuMemHostGetDevicePointer)(&st.device_host, st.host, 0) != CUDA_SUCCESS)
      return st.host = nullptr, "cuMemHostAlloc";
    st.size = total;
  }
  auto *host = static_cast<uint8_t *>(st.host);
  if (st.kernel) {
    uint64_t offset = 0;
    for (const auto &[address, size] : s.maps) {
      CUdeviceptr src = address, dst = st.device_host + offset;
      uint64_t words = size / 8; // map storage is whole words (device_abi.h)
      void *args[] = {&src, &dst, &words};
      unsigned blocks = static_cast<unsigned>(std::min<uint64_t>((words + 255) / 256, 32));
      if (GPUBT_DRIVER(cuLaunchKernel)(st.kernel, blocks ? blocks : 1, 1, 1, 256, 1, 1, 0,
                                       st.stream, args, nullptr) != CUDA_SUCCESS)
        return "launching the copy kernel";
      offset += (size + 7) / 8 * 8;
    }
    auto give_up = std::chrono::steady_clock::now() + kKernelWait;
    CUresult r;
    while ((r = GPUBT_DRIVER(cuStreamQuery)(st.stream)) == CUDA_ERROR_NOT_READY) {
      if (std::chrono::steady_clock::now() > give_up)
        return st.pending = true, "busy"; // no SM free for it (a full GPU, or a hang)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (r != CUDA_SUCCESS)
      return "the copy kernel";
  } else {
    Sanitizer_StreamHandle stream = nullptr;
    if (SanitizerResult r = sanitizerGetStreamHandle(s.ctx, st.stream, &stream);
        r != SANITIZER_SUCCESS)
      return "sanitizerGetStreamHandle (error " + std::to_string(int(r)) + ")";
    uint64_t offset = 0;
    for (const auto &[address, size] : s.maps) { // each returns once its copy is done
      if (SanitizerResult r = sanitizerMemcpyDeviceToHost(host + offset,
                                                          reinterpret_cast<void *>(address), size,
                                                          stream);
          r != SANITIZER_SUCCESS)
        return "sanitizerMemcpyDeviceToHost (error " + std::to_string(int(r)) + ")";
      offset += (size + 7) / 8 * 8;
    }
  }
  return "";
}

void LiveCopier::take_image(const Source &s, const Staging &st, abi::DeviceImage &image) {
  const auto *host = static_cast<const uint8_t *>(st.host);
  image.device = s.device;
  uint64_t offset = 0;
  for (const auto &[address, size] : s.maps) {
    image.maps.emplace_back(host + offset, host + offset + size);
    offset += (size + 7) / 8 * 8;
  }
}

void LiveCopier::run() {
  g_on_copier_thread = true;
  become_agent_thread("maps");
  std::unique_lock<std::mutex> lock(mu_);
  auto due = std::chrono::steady_clock::now() + period_;
  while (!stop_) {
    cv_.wait_until(lock, due, [&] { return stop_ || prepare_due_; });
    if (stop_)
      break;
    if (std::exchange(prepare_due_, false)) { // before the program's first launch: at once
      lock.unlock();
      prepare_asked();
      lock.lock();
      continue;
    }
    due = std::chrono::steady_clock::now() + period_;
    lock.unlock();
    abi::AgentResults round;
    uint64_t began = abi::live_clock_ns();
    Phases took;
    std::vector<Source> sources = collect_(*this, round); // calls begin_round
    for (const Source &s : sources) {
      lock.lock();
      bool wanted = !stop_ && copyable_.count(s.ctx);
      busy_ = wanted ? s.ctx : nullptr;
      Staging *st = wanted ? &staging_[s.ctx] : nullptr; // forget() erases it only when not busy
      lock.unlock();
      if (!wanted)
        continue;
      abi::DeviceImage image;
      std::string failed = "cuCtxPushCurrent";
      uint64_t copying = abi::live_clock_ns();
      if (GPUBT_DRIVER(cuCtxPushCurrent)(s.ctx) == CUDA_SUCCESS) {
        failed = copy(s, *st);
        CUcontext popped;
        GPUBT_DRIVER(cuCtxPopCurrent)(&popped);
      }
      bool copied = failed.empty();
      uint64_t taking = abi::live_clock_ns();
      if (copied)
        take_image(s, *st, image);
      took.gpu += taking - copying;
      took.host += abi::live_clock_ns() - taking;
      if (failed == "busy") // not a failure: next period
        failed.clear();
      lock.lock();
      busy_ = nullptr;
      cv_.notify_all();
      lock.unlock();
      if (!copied && !std::exchange(reported_, true)) // not busy: report may take the agent's lock
        report_("copying the GPU's maps while the program runs failed (" + failed +
                "): they show when it ends");
      if (copied)
        round.images.push_back(std::move(image));
    }
    uint64_t sending = abi::live_clock_ns();
    std::string record = round.images.empty() ? "" : abi::live_maps_record(getpid(), round, began);
    bool sent = record.empty() || send_(record);
    took.send = abi::live_clock_ns() - sending;
    lock.lock();
    stats_.add(took, record.size());
    if (!sent)
      break; // gpubt is gone
  }
  finished_ = true;
  cv_.notify_all();
  lock.unlock();
  g_prep.drop_asked(); // no launch is to wait for them
}

} // namespace gpubt::agent
