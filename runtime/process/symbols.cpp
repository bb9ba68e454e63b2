// Matches function patterns against ELF symbols; caches each file's symbols for the session.
#include "runtime/process/symbols.h"
#include "runtime/process/binary_paths.h"
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fnmatch.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace gpubt::runtime {
namespace {

// Lower is better: global, then fewer leading underscores, then shorter, then by name.
auto alias_rank(const ElfSymbol &s) {
  size_t underscores = s.name.find_first_not_of('_');
  return std::make_tuple(!s.global, underscores, s.name.size(), s.name);
}

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Of two names for one address, the one the other decorates is the public name, even when weak:
// NCCL exports ncclAllReduce as a weak alias of its strong pncclAllReduce (MPI's MPI_Send and
// PMPI_Send are the same pattern), glibc nanosleep of __nanosleep.
bool better_alias(const ElfSymbol &a, const ElfSymbol &b) {
  if (ends_with(b.name, a.name))
    return true;
  if (ends_with(a.name, b.name))
    return false;
  return alias_rank(a) < alias_rank(b);
}

} // namespace

bool has_wildcard(const std::string &pattern) {
  return pattern.find_first_of("*?[") != std::string::npos;
}

bool match_wildcard(const std::string &pattern, const std::string &name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

std::vector<ElfSymbol> match_functions(const std::vector<ElfSymbol> &symbols,
                                       const std::string &pattern) {
  std::map<uint64_t, const ElfSymbol *> by_addr;
  bool wild = has_wildcard(pattern);
  for (const auto &s : symbols) {
    if (wild ? !match_wildcard(pattern, s.name) : s.name != pattern)
      continue;
    auto [it, inserted] = by_addr.emplace(s.vaddr, &s);
    if (!inserted && better_alias(s, *it->second))
      it->second = &s;
  }
  std::vector<ElfSymbol> out;
  for (auto &[_, s] : by_addr)
    out.push_back(*s);
  std::sort(out.begin(), out.end(),
            [](const ElfSymbol &a, const ElfSymbol &b) { return a.name < b.name; });
  return out;
}

Result<const std::vector<ElfSymbol> *> cached_elf_functions(const std::string &path) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::vector<ElfSymbol>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end())
    return it->second.get();
  auto syms = read_elf_functions(path);
  if (!syms)
    return make_error(syms.error());
  auto &slot = cache[path];
  slot = std::make_unique<std::vector<ElfSymbol>>(std::move(*syms));
  return slot.get();
}

namespace {

bool parse_number(const std::string &s, uint64_t &v) {
  if (s.empty())
    return false;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  auto *first = s.data() + (hex ? 2 : 0), *last = s.data() + s.size();
  auto [end, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
  return ec == std::errc() && end == last;
}

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// uprobe:BIN:FUNC+OFF and uprobe:BIN:ADDRESS (decimal or 0x hex), as bpftrace 0.17: the offset
// must stay inside FUNC, the address inside some function. nullopt: PATTERN is neither form.
std::optional<Result<UprobeTarget>> resolve_address_form(const std::string &path,
                                                         const std::string &target,
                                                         const std::vector<ElfSymbol> &syms,
                                                         const std::string &pattern) {
  uint64_t n = 0;
  if (parse_number(pattern, n)) {
    for (const auto &s : syms)
      if (n >= s.vaddr && n < s.vaddr + std::max<uint64_t>(s.size, 1))
        return Result<UprobeTarget>(UprobeTarget{path, pattern, s.file_offset + (n - s.vaddr)});
    return Result<UprobeTarget>(
        make_error("Could not resolve address: " + target + ":" + hex(n)));
  }
  auto plus = pattern.rfind('+');
  if (plus == std::string::npos || plus == 0 || !parse_number(pattern.substr(plus + 1), n))
    return std::nullopt;
  std::string func = pattern.substr(0, plus);
  for (const auto &s : syms) {
    if (s.name != func)
      continue;
    if (n >= s.size)
      return Result<UprobeTarget>(make_error("Offset outside the function bounds ('" + func +
                                             "' size is " + std::to_string(s.size) + ")"));
    return Result<UprobeTarget>(UprobeTarget{path, pattern, s.file_offset + n});
  }
  return Result<UprobeTarget>(make_error("Could not resolve symbol: " + target + ":" + func));
}

} // namespace

Result<std::vector<UprobeTarget>> resolve_uprobe_targets(const std::string &target,
                                                         const std::string &func_pattern, int pid) {
  auto path = resolve_binary_path(target, pid);
  if (!path)
    return make_error(path.error());
  auto elf = is_elf_file(*path);
  if (!elf)
    return make_error("uprobe target file " + elf.error());
  if (!*elf)
    return make_error("uprobe target file '" + target + "' is not an ELF file");
  auto syms = cached_elf_functions(*path);
  if (!syms)
    return make_error(syms.error());
  std::vector<UprobeTarget> out;
  if (auto at = resolve_address_form(*path, target, **syms, func_pattern)) {
    if (!*at)
      return make_error(at->error());
    out.push_back(**at);
    return out;
  }
  for (auto &s : match_functions(**syms, func_pattern))
    out.push_back(UprobeTarget{*path, s.name, s.file_offset});
  return out;
}

std::string no_symbols_message(const std::string &probe_name) {
  return probe_name + ": no symbols matched";
}

} // namespace gpubt::runtime
