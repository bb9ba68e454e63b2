// Kernels the PTX instrumenter's memory-access and barrier tests compile with nvcc at test time:
// global loads and stores, a gather, a shared-memory reverse with __syncthreads(), atomics on
// both spaces, a local array, a generic pointer to either space, named barriers.
#include <cstdint>

extern "C" __global__ void gather(const float *in, float *out, int stride, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[(int64_t)i * stride % n];
}

extern "C" __global__ void reverse_block(int *data, unsigned *hits) {
  __shared__ int tile[256];
  __shared__ unsigned count;
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  if (t == 0)
    count = 0;
  tile[t] = data[base + t];
  __syncthreads();
  data[base + t] = tile[blockDim.x - 1 - t];
  atomicAdd(&count, 1u);
  __syncthreads();
  if (t == 0)
    atomicAdd(hits, count);
}

extern "C" __global__ void mixed(int *g, int pick, int k, float4 *v) {
  __shared__ int s[64];
  int local[16];
  int t = threadIdx.x;
  for (int j = 0; j < 16; ++j)
    local[j] = g[j] * t;
  int *p = pick ? &s[t % 64] : &g[t];
  *p = local[k & 15];
  v[t] = make_float4(1, 2, 3, 4);
  asm volatile("bar.sync 1, 64;");
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %0, 0;\n\t@q bar.arrive 2, 32;\n\t}" ::"r"(t & 1));
  g[t] = __syncthreads_count(*p > 0) + s[(t + 1) % 64];
}
