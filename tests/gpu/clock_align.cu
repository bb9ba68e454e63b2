// How %globaltimer relates to host CLOCK_MONOTONIC, and how far gpubt's GPU `nsecs` is from
// it. The first mode measures the old assumption (%globaltimer counts CLOCK_REALTIME: an offset
// of CLOCK_MONOTONIC - CLOCK_REALTIME, sampled once) and the GPU clock's drift; gpubt's agent now
// measures the GPU clock itself (runtime/cuda_agent/gpu_clock.h).
//
// Usage: clock_align [SAMPLES=200] [DRIFT_S=30] [GAP_US=2000]
//        clock_align --stamps K [GAP_MS=1]  K launches of stamp<<<1,1>>>, each printed as
//                                  "stamp I T0 T1 GLOBALTIMER MONO_MINUS_REAL MEASURED" (MEASURED:
//                                  CLOCK_MONOTONIC - %globaltimer by pingpong right after), to
//                                  compare with what a gpubt `gpu:kprobe:stamp` prints as nsecs.
// Two brackets: "launch" (t0, stamp<<<1,1>>>, cudaDeviceSynchronize, t1: what a traced program
// looks like, microseconds wide) and "pingpong" (a resident one-thread kernel answers requests
// through mapped host memory: one PCIe round trip wide). The error of one sample is
// gpu_mono - (t0 + t1) / 2, so it is known to within the bracket's half width.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>

#include "check.cuh"

typedef unsigned long long u64;
typedef long long i64;

__global__ void stamp(u64 *out) { out[0] = globaltimer(); }

// Smallest nonzero step between consecutive reads, number of steps, time covered.
__global__ void resolution(u64 *out, int iters) {
  u64 first = globaltimer(), prev = first, min_step = ~0ull, changes = 0;
  for (int i = 0; i < iters; ++i) {
    u64 t = globaltimer();
    if (t != prev) {
      min_step = t - prev < min_step ? t - prev : min_step;
      ++changes;
      prev = t;
    }
  }
  out[0] = min_step;
  out[1] = changes;
  out[2] = prev - first;
}

// Not check.cuh's CHECK, which returns from main: these helpers are void.
#define MUST(x) must((x), #x)
void must(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

i64 ns(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return i64(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The agent's offset, computed the agent's way.
i64 mono_minus_real() {
  timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  return (i64(mono.tv_sec) - real.tv_sec) * 1000000000 + (mono.tv_nsec - real.tv_nsec);
}

struct Sample {
  i64 t0, t1;   // CLOCK_MONOTONIC around the GPU read
  u64 gt;       // %globaltimer
  i64 offset;   // mono_minus_real() just before t0 (the re-aligned map)
  i64 at;       // CLOCK_MONOTONIC when taken
  i64 mid() const { return t0 + (t1 - t0) / 2; }
  i64 err(i64 off) const { return i64(gt) + off - mid(); }
};

struct Gpu {
  u64 *dstamp = nullptr;
  volatile u64 *req = nullptr, *ans = nullptr;
  u64 *dreq = nullptr, *dans = nullptr;
  cudaStream_t stream;
};

Sample launch_sample(Gpu &g) {
  Sample s;
  s.offset = mono_minus_real();
  s.t0 = ns(CLOCK_MONOTONIC);
  stamp<<<1, 1>>>(g.dstamp);
  MUST(cudaDeviceSynchronize());
  s.t1 = ns(CLOCK_MONOTONIC);
  s.at = s.t1;
  MUST(cudaMemcpy(&s.gt, g.dstamp, 8, cudaMemcpyDeviceToHost));
  return s;
}

void launch_samples(Gpu &g, int n, int gap_us, std::vector<Sample> &out) {
  for (int i = 0; i < n; ++i) {
    usleep(gap_us);
    out.push_back(launch_sample(g));
  }
}

// N round trips with a resident kernel; false if an answer took over 2 s (the kernel is then
// told to stop; the samples before it are kept).
bool pingpong_samples(Gpu &g, int n, int gap_us, std::vector<Sample> &out) {
  *g.req = 0;
  g.ans[0] = 0;
  pingpong<<<1, 1, 0, g.stream>>>(reinterpret_cast<uint64_t *>(g.dreq),
                                  reinterpret_cast<uint64_t *>(g.dans), n);
  MUST(cudaGetLastError());
  bool ok = true;
  for (int k = 1; k <= n && ok; ++k) {
    usleep(gap_us);
    Sample s;
    s.offset = mono_minus_real();
    s.t0 = ns(CLOCK_MONOTONIC);
    *g.req = u64(k);
    for (unsigned spins = 0; g.ans[0] != u64(k); ++spins)
      if ((spins & 1023) == 0 && ns(CLOCK_MONOTONIC) - s.t0 > 2000000000) {
        ok = false;
        break;
      }
    s.t1 = ns(CLOCK_MONOTONIC);
    s.at = s.t1;
    s.gt = g.ans[1];
    if (ok)
      out.push_back(s);
  }
  if (!ok)
    *g.req = ~0ull;
  MUST(cudaStreamSynchronize(g.stream));
  return ok;
}

i64 quantile(std::vector<i64> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))];
}

std::vector<i64> abs_errs(const std::vector<Sample> &s, i64 fixed, bool realigned) {
  std::vector<i64> e;
  for (const Sample &x : s)
    e.push_back(std::llabs(x.err(realigned ? x.offset : fixed)));
  return e;
}

void report(const char *prefix, const std::vector<Sample> &s, i64 offset) {
  std::vector<i64> e = abs_errs(s, offset, false), signed_e, half;
  for (const Sample &x : s) {
    signed_e.push_back(x.err(offset));
    half.push_back((x.t1 - x.t0) / 2);
  }
  std::printf("%soffset_err_ns median %lld p99 %lld max %lld\n", prefix, quantile(e, 0.5),
              quantile(e, 0.99), quantile(e, 1.0));
  std::printf("%soffset_err_signed_median_ns %lld\n", prefix, quantile(signed_e, 0.5));
  std::printf("%sbracket_ns median %lld\n", prefix, 2 * quantile(half, 0.5));
}

// The sample with the narrowest bracket: the best single estimate of a batch.
const Sample &best(const std::vector<Sample> &s) {
  return *std::min_element(s.begin(), s.end(), [](const Sample &a, const Sample &b) {
    return a.t1 - a.t0 < b.t1 - b.t0;
  });
}

// K stamp launches, each followed by the program's own measurement of the GPU clock (the
// narrowest of 5 pingpong round trips): CLOCK_MONOTONIC - %globaltimer, good to ~1.5 us.
int stamps(Gpu &g, int k, int gap_ms) {
  for (int i = 0; i < k; ++i) {
    usleep(1000 * gap_ms);
    Sample s = launch_sample(g);
    std::vector<Sample> ping;
    i64 measured = 0;
    if (pingpong_samples(g, 5, 0, ping) && !ping.empty()) {
      const Sample &b = best(ping);
      measured = (b.t0 + b.t1) / 2 - i64(b.gt);
    }
    std::printf("stamp %d %lld %lld %llu %lld %lld\n", i, s.t0, s.t1, s.gt, s.offset, measured);
  }
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0); // whole lines: gpubt writes to the same stdout
  Gpu g;
  MUST(cudaSetDeviceFlags(cudaDeviceMapHost));
  MUST(cudaMalloc(&g.dstamp, 8));
  u64 *host = nullptr;
  MUST(cudaHostAlloc(&host, 64, cudaHostAllocMapped));
  std::memset(host, 0, 64);
  g.req = host;
  g.ans = host + 4; // own 32 bytes: the answer is written while the host polls the request
  MUST(cudaHostGetDevicePointer((void **)&g.dreq, host, 0));
  g.dans = g.dreq + 4;
  MUST(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  launch_sample(g); // warm-up: module load, first-launch costs

  if (argc > 2 && std::strcmp(argv[1], "--stamps") == 0)
    return stamps(g, std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 1);
  int samples = argc > 1 ? std::atoi(argv[1]) : 200;
  int drift_s = argc > 2 ? std::atoi(argv[2]) : 30;
  int gap_us = argc > 3 ? std::atoi(argv[3]) : 2000;

  u64 *dres, res[3];
  MUST(cudaMalloc(&dres, sizeof res));
  resolution<<<1, 1>>>(dres, 1 << 20);
  MUST(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost));

  const i64 offset0 = mono_minus_real(); // once, like the agent
  const i64 start = ns(CLOCK_MONOTONIC);
  std::vector<Sample> launch_a, ping_a;
  launch_samples(g, samples, gap_us, launch_a);
  bool have_ping = pingpong_samples(g, samples, gap_us, ping_a);

  std::vector<i64> gt_minus_real;
  for (const Sample &x : launch_a)
    gt_minus_real.push_back(i64(x.gt) - (x.mid() - x.offset));
  std::printf("samples %d\n", samples);
  std::printf("mono_minus_realtime_ns %lld\n", offset0);
  std::printf("globaltimer_minus_realtime_ns median %lld\n", quantile(gt_minus_real, 0.5));
  std::printf("globaltimer_resolution_ns %llu\n", res[0]);
  std::printf("globaltimer_update_ns %llu\n", res[1] ? res[2] / res[1] : 0);
  report("", launch_a, offset0);
  if (have_ping)
    report("pingpong_", ping_a, offset0);
  else
    std::printf("pingpong unavailable: the resident kernel did not answer\n");
  std::fflush(stdout);
  if (drift_s <= 0)
    return 0;

  // One best-of-20 estimate a second (pingpong, or launch without it), then a line through
  // them: the slope is how fast the error of a fixed offset grows.
  std::vector<std::pair<double, double>> points; // (seconds since start, error ns)
  std::vector<Sample> batch;
  for (i64 next = start; ns(CLOCK_MONOTONIC) - start <= i64(drift_s) * 1000000000;
       next += 1000000000) {
    while (ns(CLOCK_MONOTONIC) < next)
      usleep(10000);
    batch.clear();
    if (!(have_ping && pingpong_samples(g, 20, 200, batch)))
      launch_samples(g, 20, 200, batch);
    const Sample &b = best(batch);
    points.push_back({(b.at - start) / 1e9, double(b.err(offset0))});
  }
  std::vector<Sample> launch_b, ping_b;
  launch_samples(g, samples, gap_us, launch_b);
  if (have_ping)
    pingpong_samples(g, samples, gap_us, ping_b);
  const std::vector<Sample> &end = ping_b.empty() ? launch_b : ping_b;

  double sx = 0, sy = 0, sxx = 0, sxy = 0, m = double(points.size());
  for (auto [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double slope = m > 1 && m * sxx - sx * sx > 0 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : 0;
  std::printf("drift_elapsed_s %.1f\n", (ns(CLOCK_MONOTONIC) - start) / 1e9);
  std::printf("drift_ns_per_s %.1f\n", slope);
  // Median |err| at the end: with the offset taken at start (the agent's way) and re-taken
  // at each sample (what re-aligning would give).
  std::printf("drift_err_after_ns fixed_offset %lld realigned %lld method %s\n",
              quantile(abs_errs(end, offset0, false), 0.5),
              quantile(abs_errs(end, offset0, true), 0.5), ping_b.empty() ? "launch" : "pingpong");
  std::printf("mono_minus_realtime_change_ns %lld\n", mono_minus_real() - offset0);
  report("end_", launch_b, offset0);
  return 0;
}
