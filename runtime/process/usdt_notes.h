// The USDT probes of an ELF file: its .note.stapsdt entries (systemtap's sys/sdt.h), with file
// offsets for the uprobe and the semaphore, and the argument specs parsed.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/usdt_site.h"
#include <string>
#include <vector>

namespace gpubt::runtime {

// Every probe site of PATH, in note order (a probe inlined twice has two sites).
// Errors: PATH cannot be opened or is not an ELF file. A file without notes has no sites.
Result<std::vector<abi::UsdtSite>> read_usdt_sites(const std::string &path);

// x86-64 argument specs, separated by spaces: "-4@%eax 8@-8(%rbp) -4@$5".
Result<std::vector<abi::UsdtArg>> parse_usdt_args(const std::string &text);

} // namespace gpubt::runtime
