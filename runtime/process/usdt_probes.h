// usdt:TARGET:PROVIDER:NAME -> the probe sites it names, in the files TARGET names.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/usdt_site.h"
#include <string>
#include <vector>

namespace gpubt::runtime {

// The files a usdt or uprobe TARGET names: a path with wildcards globs (ELF files only), a bare name is found
// as uprobe targets are (resolve_binary_path), and an empty TARGET is every ELF file process
// PID maps, its executable first (a file of another mount namespace through /proc/PID/root).
Result<std::vector<std::string>> target_files(const std::string &target, int pid);

// The sites of TARGET's files whose provider and name match PROVIDER and NAME (wildcards; an
// empty PROVIDER matches any), in file and note order. Files that cannot be read are errors
// unless TARGET had wildcards or was empty.
Result<std::vector<abi::UsdtSite>> find_usdt_sites(const std::string &target,
                                                   const std::string &provider,
                                                   const std::string &name, int pid);

} // namespace gpubt::runtime
