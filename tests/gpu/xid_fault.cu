// A CUDA program that makes the GPU report an Xid (issue 27: GPU errors tied to the process and its
// last kernel): a warm-up kernel, then write_bad_address, which stores to device address 0x8 (an
// MMU fault: Xid 31 on the H100). Prints "xid_fault: pid N", then the error the sync returns, and
// stays alive 2 s so that a tracer sees the process before it exits.
#include <cstdio>
#include <unistd.h>

__global__ void warm_up(int *x) { x[threadIdx.x] = threadIdx.x; }

__global__ void write_bad_address(int *bad) { bad[threadIdx.x] = 1; }

int main() {
  std::printf("xid_fault: pid %d\n", int(getpid()));
  std::fflush(stdout);
  int *x;
  cudaMalloc(&x, 256 * sizeof(int));
  warm_up<<<1, 256>>>(x);
  cudaDeviceSynchronize();
  sleep(1); // a tracer that starts with the program is attached by now
  write_bad_address<<<1, 32>>>(reinterpret_cast<int *>(0x8));
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("xid_fault: %s\n", cudaGetErrorName(e));
  std::fflush(stdout);
  sleep(2);
  return e == cudaErrorIllegalAddress ? 0 : 1;
}
