"""A CuPy RawKernel (NVRTC at run time, cuModuleLoadData): prints a checksum and the launches and
threads it asked for."""
import hashlib
import cupy as cp

scale = cp.RawKernel(r'''
extern "C" __global__ void scale_add(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * 0.5f + x[i];
}''', 'scale_add')
N, BLOCK, LAUNCHES = 1 << 20, 256, 4
x = cp.arange(N, dtype=cp.float32)
y = cp.ones(N, dtype=cp.float32)
grid = (N + BLOCK - 1) // BLOCK
for _ in range(LAUNCHES):
    scale((grid,), (BLOCK,), (x, y, cp.int32(N)))
cp.cuda.Device().synchronize()
print('checksum', hashlib.sha256(cp.asnumpy(y).tobytes()).hexdigest()[:16])
print(f'launches {LAUNCHES} threads {LAUNCHES * grid * BLOCK}')
