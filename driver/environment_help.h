// The ENVIRONMENT section of --help: every variable gpubt (or its agent in a traced program)
// reads. tests/e2e/run_help.py checks it against the getenv calls in the source.
#pragma once

namespace gpubt::driver {

extern const char kEnvironmentHelp[];

} // namespace gpubt::driver
