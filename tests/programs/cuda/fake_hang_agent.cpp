// A stand-in CUDA agent for CI (no GPU): loaded as gpubt's agent is (CUDA_INJECTION64_PATH,
// by ../fake_cuda_init.c), it reads gpubt's config (GPUBT_AGENT_CONFIG) and, when told to watch
// launches, sends on the live socket the RunningLaunches records a real agent would send while
// a kernel spins: a fixed script of five looks at two streams over 6 s (running_launches.h)
// (FAKE_HANG_HOLD_S: then the last look again, live, for that many seconds more), then writes
// empty results and returns. gpu_hang.test checks
// what gpubt's gpu:hang probes make of them. When told to time launches (launch-level probes,
// issue 25) it first sends the FinishedLaunches records of a fixed set of launches (send_finished
// below), which gpu_launch_probes.test checks.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/finished_launches.h"
#include "runtime/abi/running_launches.h"
#include "runtime/abi/send_all.h"

namespace abi = gpubt::abi;

namespace {

constexpr uint64_t kSec = 1'000'000'000;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * kSec + uint64_t(ts.tv_nsec);
}

abi::RunningLaunch launch(const char *kernel, uint64_t stream, uint64_t seq, uint64_t since,
                          bool exact, uint32_t later) {
  abi::RunningLaunch l;
  l.kernel = kernel, l.stream = stream, l.seq = seq, l.since_ns = since;
  l.exact = exact, l.later = later;
  return l;
}

// A launch called WAIT_US before it started (launch_call); WAIT_US < 0: no call time (0).
abi::FinishedLaunch finished(const char *kernel, uint64_t stream, uint64_t seq, uint64_t start,
                             uint64_t us, int64_t wait_us) {
  abi::FinishedLaunch l;
  l.kernel = kernel, l.stream = stream, l.seq = seq, l.start_ns = start;
  l.end_ns = start + us * 1000;
  l.call_ns = wait_us < 0 ? 0 : start - uint64_t(wait_us) * 1000;
  return l;
}

// Six launches in two records, as a real agent batches them: vectorAdd (grid 4096, block 256,
// stream 0x10) ran 300, 350 and 5 us; spin (grid 4, block 128, device 1, stream 0x20) 1500 us
// twice; reduce (grid 2x2, block 64, stream 0x10) 40 us. The second record says 0 lost. Each
// started this long after its launch call (launch_call): vectorAdd 20 us, spin 5 us the first
// time and no call time the second (no call recorded: 0), reduce 398 us (queued behind
// vectorAdd on its stream).
bool send_finished(int fd) {
  uint64_t t = now_ns() - kSec;
  abi::FinishedLaunch vec = finished("_Z9vectorAddPKfS0_Pfi", 0x10, 1, t, 300, 20);
  vec.grid[0] = 4096, vec.block[0] = 256;
  abi::FinishedLaunch spin = finished("_Z4spinPi", 0x20, 1, t + 1000, 1500, 5);
  spin.grid[0] = 4, spin.block[0] = 128, spin.device = 1;
  abi::FinishedLaunch reduce = finished("_Z6reducePfi", 0x10, 2, t + 400'000, 40, 398);
  reduce.grid[0] = 2, reduce.grid[1] = 2, reduce.block[0] = 64;
  auto at = [](abi::FinishedLaunch l, uint64_t seq, uint64_t start, uint64_t us, int64_t wait_us) {
    abi::FinishedLaunch m = finished(l.kernel.c_str(), l.stream, seq, start, us, wait_us);
    std::copy(l.grid, l.grid + 3, m.grid), std::copy(l.block, l.block + 3, m.block);
    m.device = l.device;
    return m;
  };
  abi::FinishedLaunches first{uint32_t(getpid()), 0, {vec, spin, reduce}};
  abi::FinishedLaunches second{uint32_t(getpid()),
                               0,
                               {at(vec, 3, t + 500'000, 350, 20),
                                at(spin, 2, t + 600'000, 1500, -1),
                                at(vec, 4, t + 900'000, 5, 20)}};
  for (const auto &r : {first, second}) {
    std::string record = abi::finished_launches_record(r);
    if (!abi::send_all(fd, record.data(), record.size()))
      return false;
  }
  return true;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  const char *path = std::getenv("GPUBT_AGENT_CONFIG");
  std::stringstream text;
  text << std::ifstream(path ? path : "").rdbuf();
  auto config = abi::parse_agent_config(text.str());
  if (!config) {
    std::fprintf(stderr, "fake agent: %s\n", config.error().c_str());
    return 0;
  }
  if (config->time_launches && config->live_fd >= 0) {
    std::fprintf(stderr, "fake agent: timing launches\n");
    if (!send_finished(config->live_fd))
      std::fprintf(stderr, "fake agent: sending failed\n");
  }
  if (config->time_launches && !config->watch_launches) {
    std::ofstream(config->results_path, std::ios::binary) << abi::write_agent_results({});
    return 1;
  }
  if (!config->watch_launches || config->live_ms == 0 || config->live_fd < 0) {
    std::fprintf(stderr, "fake agent: not asked to watch launches\n");
    return 0;
  }
  std::fprintf(stderr, "fake agent: watching every %u ms\n", config->live_ms);
  uint64_t t = now_ns();
  // Stream 0x10: spin (exact, grid 4x1x1, block 128x1x1, device 0) runs from t - 1s until
  // t + 3.5s; then a second launch of it, seen once, 2.5 s after it began. Stream 0x20: reduce
  // (a graph replay of 3 kernels, not exact, 2 queued after it, grid 2x2x1, block 64x1x1,
  // device 1) from t - 5s throughout.
  // The looks are as far apart in real time as their times say (a late look sees older
  // launches: every outcome gpu_hang.test checks holds however late they come).
  abi::RunningLaunch spin = launch("_Z4spinPi", 0x10, 3, t - kSec, true, 0);
  spin.grid[0] = 4, spin.block[0] = 128;
  abi::RunningLaunch again = spin;
  again.seq = 4;
  abi::RunningLaunch reduce = launch("_Z6reducePfi", 0x20, 7, t - 5 * kSec, false, 2);
  reduce.grid[0] = 2, reduce.grid[1] = 2, reduce.block[0] = 64, reduce.device = 1;
  reduce.graph_kernels = 3; // a CUDA graph replay, named by its first kernel node
  const struct {
    uint64_t after;
    std::vector<abi::RunningLaunch> running;
  } looks[] = {
      {0, {spin, reduce}},                      // spin 1s, reduce 5s
      {kSec + kSec / 2, {spin, reduce}},        // spin 2.5s
      {3 * kSec, {spin, reduce}},               // spin 4s: no second time
      {3 * kSec + kSec / 2, {reduce}},          // spin finished
      {6 * kSec, {again, reduce}},              // the next spin 2.5s
  };
  std::vector<abi::RunningLaunch> last;
  for (const auto &look : looks) {
    while (now_ns() < t + look.after)
      usleep(10'000);
    abi::RunningLaunches r{uint32_t(getpid()), now_ns(), look.running};
    for (auto &l : r.launches)
      if (l.seq == again.seq && l.stream == again.stream)
        l.since_ns = r.sent_ns - 2 * kSec - kSec / 2;
    last = r.launches;
    std::string record = abi::running_launches_record(r);
    if (!abi::send_all(config->live_fd, record.data(), record.size()))
      std::fprintf(stderr, "fake agent: sending failed\n");
  }
  // FAKE_HANG_HOLD_S=N: then N seconds more of the last look, every live period, as a hung
  // program's agent goes on (run_metrics.py scrapes it).
  const char *hold = std::getenv("FAKE_HANG_HOLD_S");
  for (uint64_t end = now_ns() + (hold ? std::strtoull(hold, nullptr, 10) : 0) * kSec;
       now_ns() < end;) {
    usleep(config->live_ms * 1000);
    abi::RunningLaunches r{uint32_t(getpid()), now_ns(), last};
    std::string record = abi::running_launches_record(r);
    if (!abi::send_all(config->live_fd, record.data(), record.size()))
      break; // gpubt went away
  }
  std::ofstream(config->results_path, std::ios::binary) << abi::write_agent_results({});
  return 1;
}
