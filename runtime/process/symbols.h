// Uprobe target resolution: a (target, function pattern) pair -> the functions to attach to.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/process/elf_symbols.h"
#include <string>
#include <vector>

namespace gpubt::runtime {

struct UprobeTarget {
  std::string path;    // the resolved file the uprobe is placed in
  std::string func;    // the symbol name
  uint64_t offset = 0; // file offset
};

// True when `pattern` contains a wildcard (`*`, `?`, `[`).
bool has_wildcard(const std::string &pattern);

// fnmatch-like match of `*` and `?` (and [...] sets) against a whole symbol name.
bool match_wildcard(const std::string &pattern, const std::string &name);

// Functions of `symbols` matching `pattern`, one per address (aliases deduped, preferring a
// global name without leading underscores), sorted by name.
std::vector<ElfSymbol> match_functions(const std::vector<ElfSymbol> &symbols,
                                       const std::string &pattern);

// Resolves TARGET (see resolve_binary_path), reads its symbols (cached per path) and matches
// FUNC_PATTERN. An empty vector means no symbol matched; see no_symbols_message.
Result<std::vector<UprobeTarget>>
resolve_uprobe_targets(const std::string &target, const std::string &func_pattern, int pid = -1);

// "uprobe:/bin/ls:nope: no symbols matched" style message for an empty resolution.
std::string no_symbols_message(const std::string &probe_name);

// The cached function symbols of the ELF file at `path`.
Result<const std::vector<ElfSymbol> *> cached_elf_functions(const std::string &path);

} // namespace gpubt::runtime
