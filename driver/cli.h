// The command line, bpftrace's flags plus gpubt's own; returns the process exit status.
#pragma once

namespace gpubt::driver {
int run_cli(int argc, char **argv);
}
