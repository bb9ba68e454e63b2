// Known truth for block probes and active_lanes (issue 28): one kernel, `diverge`, launched in
// odd shapes (blocks with a partial last warp, a 2-D grid of 2-D blocks, threads that return
// early), whose warps take a data-dependent branch on their odd-numbered threads only (in[t] = t,
// so half the lanes of a full warp) with a global load in the branch alone. Prints, from the
// launch shapes, what gpubt must count:
//   blocks B                  gpu:block_begin / gpu:block_end fire B times in all
//   block S X Y               one line per block: its bdim_x (S), bid_x, bid_y
//   entry K C                 gpu:kprobe: C threads see popcount(active_lanes) == K
//   load K C                  global loads (in[t] by each thread left, other[t] in the branch):
//                             C loads see K active lanes (for gpu:load, issue 28's other half)
// and a checksum of the results (the same traced or not).
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>
#include <cuda_runtime.h>

#include "check.cuh"

__global__ void diverge(const int *in, const int *other, int *out, int early) {
  int block = blockIdx.x + gridDim.x * blockIdx.y;
  int threads = blockDim.x * blockDim.y;
  int t = block * threads + threadIdx.x + blockDim.x * threadIdx.y;
  if (t >= early)
    return; // early exits: their block still ends once
  int v = in[t];
  if (v & 1) {
    int w = other[t];
#pragma unroll 1
    for (int k = 0; k < 8; ++k) // a loop, so a real branch rather than predication
      w = w * 1103515245 + 12345;
    out[t] = w;
  } else {
    out[t] = v;
  }
}

struct Shape {
  dim3 grid, block;
  int early; // threads at or past this global index return at once
};

int main() {
  const Shape shapes[] = {
      {dim3(7), dim3(100), 650},         // 3 full warps and 4 lanes; the last block partly early
      {dim3(3, 2), dim3(13, 5), 1 << 30}, // 65 threads: 2 full warps and 1 lane
      {dim3(1), dim3(32), 1 << 30},      // one full warp
  };
  int most = 0;
  for (const auto &s : shapes)
    most = std::max<int>(most, s.grid.x * s.grid.y * s.block.x * s.block.y);
  std::vector<int> in(most), other(most);
  for (int i = 0; i < most; ++i)
    in[i] = i, other[i] = 3 * i + 1;
  int *d_in, *d_other, *d_out;
  CHECK(cudaMalloc(&d_in, most * sizeof(int)));
  CHECK(cudaMalloc(&d_other, most * sizeof(int)));
  CHECK(cudaMalloc(&d_out, most * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), most * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_other, other.data(), most * sizeof(int), cudaMemcpyHostToDevice));

  uint64_t sum = 0;
  int blocks = 0;
  std::map<int, long> entry, load;
  std::vector<int> out(most);
  for (const auto &s : shapes) {
    CHECK(cudaMemset(d_out, 0, most * sizeof(int)));
    diverge<<<s.grid, s.block>>>(d_in, d_other, d_out, s.early);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out.data(), d_out, most * sizeof(int), cudaMemcpyDeviceToHost));
    sum ^= fnv1a(out.data(), most * sizeof(int));
    int threads = s.block.x * s.block.y;
    for (unsigned y = 0; y < s.grid.y; ++y)
      for (unsigned x = 0; x < s.grid.x; ++x) {
        ++blocks;
        std::printf("block %u %u %u\n", s.block.x, x, y);
        int base = (x + s.grid.x * y) * threads;
        for (int w = 0; w < threads; w += 32) { // each warp: its lanes, then those left, then odd
          int lanes = std::min(32, threads - w), left = 0, odd = 0;
          for (int l = 0; l < lanes; ++l) {
            int t = base + w + l;
            left += t < s.early;
            odd += t < s.early && (t & 1);
          }
          entry[lanes] += lanes;
          if (left)
            load[left] += left;
          if (odd)
            load[odd] += odd;
        }
      }
  }
  std::printf("blocks %d\n", blocks);
  for (auto [k, c] : entry)
    std::printf("entry %d %ld\n", k, c);
  for (auto [k, c] : load)
    std::printf("load %d %ld\n", k, c);
  std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_other));
  CHECK(cudaFree(d_out));
  return 0;
}
