// One Output that hands every call to two: the main format and an extra sink written beside it
// (the --timeline file).
#pragma once
#include <memory>

#include "runtime/output/output.h"

namespace gpubt::runtime {

std::unique_ptr<Output> make_tee_output(std::unique_ptr<Output> main, std::unique_ptr<Output> extra);

} // namespace gpubt::runtime
