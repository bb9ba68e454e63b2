// Symbolizes user addresses; keeps the last good /proc/PID/maps of each pid so addresses of a
// process that has since exited still resolve.
#include "runtime/process/symbolizer.h"
#include "runtime/process/symbols.h"
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

namespace gpubt::runtime {
namespace {

struct Mapping {
  uint64_t start, end, pgoff;
  std::string path;
};

std::mutex mu;
std::map<int, std::vector<Mapping>> maps_cache;
std::map<std::string, std::vector<ElfSymbol>> by_offset_cache;

std::vector<Mapping> read_maps(int pid) {
  std::vector<Mapping> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(f, line)) {
    Mapping m{};
    char perms[8] = {};
    int path_at = 0;
    if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &m.start, &m.end,
               perms, &m.pgoff, &path_at) < 4)
      continue;
    if (perms[2] != 'x' || path_at <= 0 || static_cast<size_t>(path_at) >= line.size() ||
        line[path_at] != '/')
      continue;
    m.path = line.substr(path_at);
    out.push_back(std::move(m));
  }
  return out;
}

const Mapping *find_mapping(const std::vector<Mapping> &maps, uint64_t addr) {
  for (const auto &m : maps)
    if (addr >= m.start && addr < m.end)
      return &m;
  return nullptr;
}

const std::vector<ElfSymbol> &symbols_by_offset(const std::string &path) {
  auto it = by_offset_cache.find(path);
  if (it != by_offset_cache.end())
    return it->second;
  std::vector<ElfSymbol> syms;
  if (auto r = cached_elf_functions(path))
    syms = **r;
  std::sort(syms.begin(), syms.end(), [](const ElfSymbol &a, const ElfSymbol &b) {
    return a.file_offset != b.file_offset ? a.file_offset < b.file_offset : a.name < b.name;
  });
  return by_offset_cache.emplace(path, std::move(syms)).first->second;
}

const ElfSymbol *find_symbol(const std::vector<ElfSymbol> &syms, uint64_t off) {
  auto it = std::upper_bound(syms.begin(), syms.end(), off,
                             [](uint64_t o, const ElfSymbol &s) { return o < s.file_offset; });
  while (it != syms.begin()) {
    --it;
    if (off == it->file_offset || off < it->file_offset + it->size)
      return &*it;
    if (off - it->file_offset > (1u << 24))
      break;
  }
  return nullptr;
}

} // namespace

bool snapshot_process_maps(int pid) {
  auto maps = read_maps(pid);
  if (maps.empty())
    return false;
  std::lock_guard<std::mutex> lock(mu);
  maps_cache[pid] = std::move(maps);
  return true;
}

std::string symbolize_user(int pid, uint64_t addr, bool show_offset) {
  std::lock_guard<std::mutex> lock(mu);
  auto &maps = maps_cache[pid];
  const Mapping *m = find_mapping(maps, addr);
  if (!m) {
    auto fresh = read_maps(pid);
    if (!fresh.empty())
      maps = std::move(fresh);
    m = find_mapping(maps, addr);
  }
  if (m) {
    uint64_t off = addr - m->start + m->pgoff;
    if (const ElfSymbol *s = find_symbol(symbols_by_offset(m->path), off)) {
      if (!show_offset || off == s->file_offset)
        return s->name;
      return fmt::format("{}+{}", s->name, off - s->file_offset);
    }
  }
  return fmt::format("{:#x}", addr);
}

Symbolizer make_process_symbolizer(int pid, bool show_offset) {
  return [pid, show_offset](uint64_t addr) { return symbolize_user(pid, addr, show_offset); };
}

} // namespace gpubt::runtime
