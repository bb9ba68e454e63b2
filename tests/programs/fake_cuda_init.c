// A stand-in for what libcuda does at cuInit (no driver here): loads the library named by
// CUDA_INJECTION64_PATH and calls its InitializeInjection, as the driver loads gpubt's agent.
// gpubt -c sets the variable; tests/programs/cuda/fake_hang_agent.cpp is the agent it loads.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const char *path = getenv("CUDA_INJECTION64_PATH");
  if (!path) {
    fprintf(stderr, "fake_cuda_init: CUDA_INJECTION64_PATH is not set\n");
    return 2;
  }
  void *lib = dlopen(path, RTLD_NOW);
  int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
  if (!init) {
    fprintf(stderr, "fake_cuda_init: %s\n", dlerror());
    return 2;
  }
  return init() == 1 ? 0 : 1; // the driver's convention: 1 is success
}
