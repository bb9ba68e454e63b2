// gpubt's entry point: parse the command line and run the pipeline.
#include "driver/cli.h"

int main(int argc, char **argv) { return gpubt::driver::run_cli(argc, argv); }
