// gpubt's version, as -V, --help and --info print it.
#pragma once

namespace gpubt::driver {

inline constexpr char kVersion[] = "v0.1.0";

} // namespace gpubt::driver
