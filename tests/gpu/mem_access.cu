// Known memory-access patterns for the memory-access and barrier probes (issue 28), checked by
// tests/gpu/mem_access_case.py: a gather of 4-byte floats with strides 1, 2 and 32 over 2^20
// threads (each thread one global load and one global store; a warp's load touches 4, 8 and 32
// sectors of 32 bytes), then a block-wide reverse through shared memory (each thread one global
// load, one shared store, one __syncthreads(), one shared load, one global store), then one
// atomicAdd per thread (the Sanitizer's flags for an atomic are what this checks). Then shared-
// memory bank conflicts: a 32x32 float tile written by rows (conflict-free) and read by columns
// (bank_column: every lane of a warp in one bank, 31 extra wavefronts; bank_padded: rows of 33
// floats, 0; bank_broadcast: every lane one word, 0). Then a barrier that one warp of each block
// reaches kLateCycles late (barrier_late; barrier_even: none late).
// Prints "mem_access: ok" when every output is right.
#include <cstdio>
#include <vector>

#include "check.cuh"

constexpr int kN = 1 << 20, kBlock = 256;

template <int Stride> __device__ void gather(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[(i * Stride) & (kN - 1)];
}
extern "C" __global__ void gather_s1(const float *in, float *out) { gather<1>(in, out); }
extern "C" __global__ void gather_s2(const float *in, float *out) { gather<2>(in, out); }
extern "C" __global__ void gather_s32(const float *in, float *out) { gather<32>(in, out); }

extern "C" __global__ void reverse_block(int *data) {
  __shared__ int tile[kBlock];
  int t = threadIdx.x, base = blockIdx.x * kBlock;
  tile[t] = data[base + t];
  __syncthreads();
  data[base + t] = tile[kBlock - 1 - t];
}

// One counter per lane: ptxas turns atomics of a warp on one address into one per warp, and
// the SASS backend would see that one.
extern "C" __global__ void atomic_count(unsigned *counts) { atomicAdd(&counts[threadIdx.x % 32], 1u); }

// 8 warps per block; warp w writes rows w, w + 8, ... (4 conflict-free shared stores per thread),
// then lane l of warp w reads row l, column w (one shared load per thread; Broadcast: row 0).
constexpr int kBankBlocks = 64;
template <int Pitch, bool Broadcast> __device__ void bank_read(float *out) {
  __shared__ float tile[32 * Pitch];
  int t = threadIdx.x, lane = t % 32, w = t / 32;
  for (int row = w; row < 32; row += kBlock / 32)
    tile[row * Pitch + lane] = float(row * 32 + lane + blockIdx.x);
  __syncthreads();
  out[blockIdx.x * kBlock + t] = tile[(Broadcast ? 0 : lane) * Pitch + w];
}
extern "C" __global__ void bank_column(float *out) { bank_read<32, false>(out); }
extern "C" __global__ void bank_padded(float *out) { bank_read<33, false>(out); }
extern "C" __global__ void bank_broadcast(float *out) { bank_read<32, true>(out); }

// The block's last warp spins kLateCycles (its SM's clock) before the barrier; the others arrive
// at once.
constexpr long long kLateCycles = 1 << 20;
template <bool Late> __device__ void barrier_wait(int *out) {
  __shared__ int tile[kBlock];
  int t = threadIdx.x;
  if (Late && t / 32 == kBlock / 32 - 1)
    for (long long start = clock64(); clock64() - start < kLateCycles;)
      ;
  tile[t] = t;
  __syncthreads();
  out[blockIdx.x * kBlock + t] = tile[kBlock - 1 - t];
}
extern "C" __global__ void barrier_late(int *out) { barrier_wait<true>(out); }
extern "C" __global__ void barrier_even(int *out) { barrier_wait<false>(out); }

// 0 when every output is right (CHECK returns 1 from here on a CUDA error).
int bank_and_barrier_errors() {
  constexpr int n = kBankBlocks * kBlock;
  std::vector<float> out(n);
  std::vector<int> iout(n);
  float *dout;
  int *diout;
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMalloc(&diout, n * sizeof(int)));
  bool ok = true;
  for (auto kernel : {bank_column, bank_padded, bank_broadcast}) {
    kernel<<<kBankBlocks, kBlock>>>(dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
      int b = i / kBlock, lane = i % 32, w = i % kBlock / 32;
      ok = ok && out[i] == float((kernel == bank_broadcast ? 0 : lane * 32) + w + b);
    }
  }
  for (auto kernel : {barrier_late, barrier_even}) {
    kernel<<<kBankBlocks, kBlock>>>(diout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(iout.data(), diout, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
      ok = ok && iout[i] == kBlock - 1 - i % kBlock;
  }
  return ok ? 0 : 1;
}

int main() {
  std::vector<float> in(kN), out(kN);
  std::vector<int> data(kN);
  for (int i = 0; i < kN; ++i) {
    in[i] = float(i);
    data[i] = i;
  }
  float *din, *dout;
  int *ddata;
  CHECK(cudaMalloc(&din, kN * sizeof(float)));
  CHECK(cudaMalloc(&dout, kN * sizeof(float)));
  CHECK(cudaMalloc(&ddata, kN * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ddata, data.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  bool ok = true;
  int stride = 1;
  for (auto kernel : {gather_s1, gather_s2, gather_s32}) {
    kernel<<<kN / kBlock, kBlock>>>(din, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, kN * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < kN; ++i)
      ok = ok && out[i] == float((i * stride) & (kN - 1));
    stride = stride == 1 ? 2 : 32;
  }
  reverse_block<<<kN / kBlock, kBlock>>>(ddata);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(data.data(), ddata, kN * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    ok = ok && data[i] == (i / kBlock) * kBlock + kBlock - 1 - i % kBlock;
  std::vector<unsigned> counts(32);
  unsigned *dcounts;
  CHECK(cudaMalloc(&dcounts, 32 * sizeof(unsigned)));
  CHECK(cudaMemset(dcounts, 0, 32 * sizeof(unsigned)));
  atomic_count<<<kN / kBlock, kBlock>>>(dcounts);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(counts.data(), dcounts, 32 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (unsigned c : counts)
    ok = ok && c == kN / 32;
  ok = bank_and_barrier_errors() == 0 && ok;
  std::printf("mem_access: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
