// cuLaunchKernel from the program's thread 3 times and 7 times from a thread named as gpubt's
// agent names its own ("gpubt-clock"): host probes on the CUDA libraries in a script with gpu
// probes count only the program's 3 (issue 23).
#include <pthread.h>
#include <thread>

extern "C" {
typedef int CUresult;
typedef void *CUfunction, *CUstream;
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
}

int main() {
  std::thread agent([] {
    pthread_setname_np(pthread_self(), "gpubt-clock");
    for (int i = 0; i < 7; ++i)
      cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  });
  agent.join();
  for (int i = 0; i < 3; ++i)
    cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  return 0;
}
