// Kernels the fatbin and PTX-instrumenter tests compile with nvcc at test time: templates, several
// kernels per module, early returns, loops with several exits, a device function and a global.
#include <cstdint>
#include <cstdio>

__device__ int gpubt_test_counter;

__device__ __noinline__ float helper(float x) { return x > 0 ? x * 2.0f : -x; }

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

extern "C" __global__ void early_exits(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (out[i] < 0) {
    out[i] = 0;
    return;
  }
  for (int k = 0; k < n; ++k) {
    if (out[k] == i) {
      atomicAdd(&gpubt_test_counter, 1);
      return;
    }
    out[i] += k;
  }
  out[i] = static_cast<int>(helper(static_cast<float>(out[i])));
}

template <typename T, int Step> __global__ void scale(T *data, T factor, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += Step * gridDim.x) {
    if (data[i] == T(0))
      return;
    data[i] *= factor;
  }
}

template __global__ void scale<float, 1>(float *, float, int);
template __global__ void scale<double, 2>(double *, double, int);
template __global__ void scale<int64_t, 4>(int64_t *, int64_t, int);

// Predicated exit and ret written by hand, as nvcc itself branches around them.
extern "C" __global__ void trap_or_exit(int *flag) {
  if (*flag == 42)
    asm volatile("exit;");
  asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.s32 p, %0, 7;\n\t@p exit;\n\t}" ::"r"(*flag));
  asm volatile("{\n\t.reg .pred q;\n\tsetp.eq.s32 q, %0, 9;\n\t@!q bra.uni skip;\n\t@q ret;\n"
               "skip:\n\t}" ::"r"(*flag));
  *flag += 1;
}

extern "C" __global__ void say(int n) {
  if (threadIdx.x == 0)
    printf("block %d of %d\n", blockIdx.x, n);
}

int main() { return 0; }
