// Placeholder until the pipeline lands.
#include "driver/cli.h"

#include <cstdio>

namespace gpubt::driver {
int run_cli(int, char **) {
  std::fprintf(stderr, "gpubt: not built yet\n");
  return 1;
}
} // namespace gpubt::driver
