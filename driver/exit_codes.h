// gpubt's exit statuses, for the driver's own failures: they are runtime/run's (one place).
#pragma once
#include "runtime/run/exit_codes.h"

namespace gpubt::driver {
using runtime::ExitCode;
using enum runtime::ExitCode;
using runtime::kExitStatusHelp;
} // namespace gpubt::driver
