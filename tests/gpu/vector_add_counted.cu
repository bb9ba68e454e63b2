// The benchmark's hand-written baseline: vectorAdd with, in its own source, the counting a
// gpu:kretprobe:vectorAdd probe does at the kernel's exit (every thread, also those with i >= n;
// warp-aggregated as gpubt's device maps are). Usage: vectorAdd_counted [N] [LAUNCHES] [VARIANT]
// VARIANT: none | count (@ = count()) | tid1024 (@[tid % 1024] = count()) | hist (@h = hist(clock))
//          | count_sm (count, one counter per SM, 128 B apart: what gpubt's striped map does)
//          | count_smwarp (one per SM and warp slot % 8, 32 B apart)
//          | count_sm_store (count_sm plus a store per warp to the counter's line: a READY mark)
//          | count_sm_loads (count_sm behind a userdata slot, a ctx probe mask and map pointer)
//          | bid (@[bid_x] = count(): one counter per block, its warps' counts each added once)
// (@[kernel] = count() by hand is count_sm: one key for the whole launch, a counter per SM.)
#include <cstdlib>
#include <cstring>

#include "check.cuh"

enum Variant {
  kNone, kCount, kTid1024, kHist, kCountSm, kCountSmWarp, kCountSmStore, kCountSmLoads, kBid
};
constexpr int kVariants = kBid + 1;
constexpr int kMaxBlocks = 1 << 18; // bid: 2^26 elements in blocks of 256

__device__ unsigned long long gCount;
__device__ unsigned long long gPerTid[1024];
__device__ unsigned long long gHist[65];
__device__ unsigned long long gPerBlock[kMaxBlocks];
__device__ unsigned long long gStripes[256 * 16]; // 256 SMs x 16 words (128 B)
struct Ctx { unsigned long long pad[12]; unsigned long long *map; unsigned long long more[64]; unsigned long long mask; };
__device__ Ctx gCtx;
__device__ Ctx *gUserdata[1];

template <int V> __global__ void vectorAddCounted(const float *a, const float *b, float *c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
  unsigned lane = threadIdx.x & 31; // 1-D blocks of a multiple of 32 threads
  if (V == kCount) { // one atomic per warp: the lowest active lane adds the warp's count
    unsigned mask = __activemask();
    if (lane == __ffs(mask) - 1)
      atomicAdd(&gCount, (unsigned long long)__popc(mask));
  } else if (V == kCountSmStore || V == kCountSmLoads) { // what gpubt's probe adds: a READY store; the ctx loads
    unsigned mask = __activemask(), sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    unsigned long long *stripes = gStripes;
    bool on = true;
    if (V == kCountSmLoads) {
      Ctx *ctx = gUserdata[0];
      on = ctx && (ctx->mask & 1);
      stripes = on ? ctx->map : nullptr;
    }
    if (on && lane == __ffs(mask) - 1) {
      atomicAdd(&stripes[(sm * 16 + 1) & (256 * 16 - 1)], (unsigned long long)__popc(mask));
      if (V == kCountSmStore)
        stripes[(sm * 16) & (256 * 16 - 1)] = 2;
    }
  } else if (V == kCountSm || V == kCountSmWarp) {
    unsigned mask = __activemask(), sm, warp;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    asm("mov.u32 %0, %%warpid;" : "=r"(warp));
    unsigned slot = V == kCountSm ? sm * 16 : sm * 16 + (warp & 7) * 2;
    if (lane == __ffs(mask) - 1)
      atomicAdd(&gStripes[slot & (256 * 16 - 1)], (unsigned long long)__popc(mask));
  } else if (V == kBid) { // one key per warp (blocks are whole warps): its lowest lane adds
    unsigned mask = __activemask();
    if (lane == __ffs(mask) - 1)
      atomicAdd(&gPerBlock[blockIdx.x % kMaxBlocks], (unsigned long long)__popc(mask));
  } else if (V == kTid1024) { // 32 distinct keys per warp: nothing to aggregate
    atomicAdd(&gPerTid[i & 1023], 1ull);
  } else if (V == kHist) { // log2 bucket of the clock; lanes of one bucket add once
    unsigned long long t = clock64();
    int bucket = t ? 64 - __clzll(t) : 0;
    unsigned mask = __activemask();
    unsigned group = __match_any_sync(mask, bucket);
    if (lane == __ffs(group) - 1)
      atomicAdd(&gHist[bucket], (unsigned long long)__popc(group));
  }
}

// Events counted so far by the variant's counters (each must end at threads x launches).
static int counted(Variant v, unsigned long long &total) {
  static unsigned long long words[1024];
  total = 0;
  if (v == kCount) {
    CHECK(cudaMemcpyFromSymbol(&total, gCount, sizeof total));
  } else if (v == kCountSm || v == kCountSmWarp || v == kCountSmStore || v == kCountSmLoads) {
    static unsigned long long stripes[256 * 16];
    CHECK(cudaMemcpyFromSymbol(stripes, gStripes, sizeof stripes));
    for (int i = 0; i < 256 * 16; ++i)
      total += v == kCountSmStore ? (i % 16 == 1 ? stripes[i] : 0) : stripes[i];
  } else if (v == kBid) {
    static unsigned long long blocks[kMaxBlocks];
    CHECK(cudaMemcpyFromSymbol(blocks, gPerBlock, sizeof blocks));
    for (int i = 0; i < kMaxBlocks; ++i)
      total += blocks[i];
  } else if (v != kNone) {
    size_t n = v == kTid1024 ? 1024 : 65;
    if (v == kTid1024)
      CHECK(cudaMemcpyFromSymbol(words, gPerTid, n * 8));
    else
      CHECK(cudaMemcpyFromSymbol(words, gHist, n * 8));
    for (size_t i = 0; i < n; ++i)
      total += words[i];
  }
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  int launches = argc > 2 ? std::atoi(argv[2]) : 1;
  const char *names[] = {"none",         "count",          "tid1024",        "hist", "count_sm",
                         "count_smwarp", "count_sm_store", "count_sm_loads", "bid"};
  Variant v = kNone;
  for (int i = 0; i < kVariants; ++i)
    if (argc > 3 && std::strcmp(argv[3], names[i]) == 0)
      v = Variant(i);
  if (argc > 3 && std::strcmp(argv[3], names[v]) != 0) {
    std::fprintf(stderr, "unknown variant %s (none, count, tid1024, hist, bid, ...)\n", argv[3]);
    return 2;
  }
  void (*kernels[])(const float *, const float *, float *, int) = {
      vectorAddCounted<kNone>, vectorAddCounted<kCount>, vectorAddCounted<kTid1024>,
      vectorAddCounted<kHist>,      vectorAddCounted<kCountSm>,      vectorAddCounted<kCountSmWarp>,
      vectorAddCounted<kCountSmStore>, vectorAddCounted<kCountSmLoads>, vectorAddCounted<kBid>};
  if (v == kCountSmLoads) { // a ctx like gpubt's: map pointer and probe mask behind a userdata slot
    Ctx host{};
    unsigned long long *stripes;
    CHECK(cudaGetSymbolAddress((void **)&stripes, gStripes));
    host.map = stripes;
    host.mask = 1;
    Ctx *dev;
    CHECK(cudaGetSymbolAddress((void **)&dev, gCtx));
    CHECK(cudaMemcpyToSymbol(gCtx, &host, sizeof host));
    CHECK(cudaMemcpyToSymbol(gUserdata, &dev, sizeof dev));
  }
  auto kernel = kernels[v];

  size_t bytes = size_t(n) * sizeof(float);
  float *ha = (float *)std::malloc(bytes), *hb = (float *)std::malloc(bytes),
        *hc = (float *)std::malloc(bytes);
  for (int i = 0; i < n; ++i) {
    ha[i] = float(i % 1000) * 0.5f;
    hb[i] = float(i % 77) * 0.25f;
  }
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
  int threads = 256, blocks = (n + threads - 1) / threads;
  kernel<<<blocks, threads>>>(a, b, c, n); // warm-up, as in vector_add.cu
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int l = 1; l < launches; ++l)
    kernel<<<blocks, threads>>>(a, b, c, n);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost));
  uint64_t sum = fnv1a(hc, bytes); // over C's bytes, the same value as vector_add.cu's
  unsigned long long total = 0;
  if (counted(v, total))
    return 1;
  std::printf("threads %d launches %d checksum %016llx\n", blocks * threads, launches,
              (unsigned long long)sum);
  std::printf("variant %s counted %llu\n", names[v], total);
  if (launches > 1)
    std::printf("kernel_us %.3f\n", 1000.0 * ms / (launches - 1));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
