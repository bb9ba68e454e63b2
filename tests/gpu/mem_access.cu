// Known memory-access patterns for the memory-access and barrier probes (issue 28), checked by
// tests/gpu/mem_access_case.py: a gather of 4-byte floats with strides 1, 2 and 32 over 2^20
// threads (each thread one global load and one global store; a warp's load touches 4, 8 and 32
// sectors of 32 bytes), then a block-wide reverse through shared memory (each thread one global
// load, one shared store, one __syncthreads(), one shared load, one global store), then one
// atomicAdd per thread (the Sanitizer's flags for an atomic are what this checks).
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
  std::printf("mem_access: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
