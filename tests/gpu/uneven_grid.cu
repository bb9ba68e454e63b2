// Known truth for threadhist: one grid-stride kernel over N elements, launched once per grid
// size in GRIDS (blocks of THREADS), so global thread t exits once per launch with more than t
// threads. Usage: uneven_grid [N=1000] [THREADS=128] [GRIDS=4,3,7,1]. Prints the expected exit
// counts per thread as ranges ("expect 0-127:4 128-383:3 ...") and a checksum.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "check.cuh"

__global__ void gridStride(unsigned *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = x[i] * 31u + unsigned(i);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  int threads = argc > 2 ? std::atoi(argv[2]) : 128;
  std::vector<int> grids;
  std::stringstream list(argc > 3 ? argv[3] : "4,3,7,1");
  for (std::string g; std::getline(list, g, ',');)
    grids.push_back(std::atoi(g.c_str()));
  unsigned *d;
  CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
  CHECK(cudaMemset(d, 0, n * sizeof(unsigned)));
  for (int g : grids)
    gridStride<<<g, threads>>>(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  uint64_t sum = fnv1a(h.data(), n * sizeof(unsigned));

  // Thread t runs in every launch of more than t threads: counts fall at each launch's size.
  std::vector<int> sizes;
  for (int g : grids)
    sizes.push_back(g * threads);
  std::sort(sizes.begin(), sizes.end());
  std::printf("expect");
  for (size_t i = 0, lo = 0; i < sizes.size(); ++i) {
    if (size_t(sizes[i]) > lo)
      std::printf(" %zu-%d:%zu", lo, sizes[i] - 1, sizes.size() - i);
    lo = std::max<size_t>(lo, sizes[i]);
  }
  std::printf("\nlaunches %zu threads %d n %d checksum %016llx\n", grids.size(), threads, n,
              (unsigned long long)sum);
  cudaFree(d);
  return 0;
}
