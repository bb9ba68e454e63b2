// SPIR-V lets several OpEntryPoints name one function. The layer puts an entry point's probes in
// its function, with that entry point's context: two entry points on one function would each
// run the other's probes too (`@[alpha]` counted while only `delta` ran). Before the probes go
// in, each of those entry points gets a copy of the function of its own.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime::vulkan {

// MODULE where every entry point in ENTRIES whose function another OpEntryPoint also names calls
// a copy of it instead (fresh ids; its execution modes and decorations copied too). MODULE
// unchanged where none does.
Result<std::vector<uint32_t>> give_entries_own_functions(const std::vector<uint32_t> &module,
                                                         const std::set<std::string> &entries);

} // namespace gpubt::runtime::vulkan
