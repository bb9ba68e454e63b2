// A program with its own kernel that links libkernels.so (tests/programs/ptx/kernels.cu) and, given
// an argument, waits to be listed with `gpubt -l 'gpu:*' -p PID`.
#include <unistd.h>

__global__ void app_only_kernel(int *p) { *p = 7; }

int main(int argc, char **) {
  if (argc > 1)
    sleep(60);
  return 0;
}
