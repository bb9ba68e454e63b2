// Kernel names come from each cubin's symbol table (entry functions) and each PTX entry's
// `.entry` items; an entry of another kind (none known in practice) is skipped.
#include "runtime/ptx/fatbin_kernels.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "runtime/ptx/cubin_functions.h"
#include "runtime/ptx/fatbin.h"
#include "runtime/ptx/ptx_scan.h"

namespace gpubt::runtime::ptx {
namespace {

Result<std::vector<std::string>> entry_kernels(const FatbinEntry &entry) {
  auto payload = entry_payload(entry);
  if (!payload)
    return make_error(payload.error());
  if (entry.is_elf()) {
    auto kernels = cubin_kernels(payload->data(), payload->size());
    if (!kernels)
      return make_error("fatbin: the sm_" + std::to_string(entry.sm_arch) + " cubin at offset " +
                        std::to_string(entry.header_offset) + " is not a 64-bit ELF");
    return std::move(*kernels);
  }
  // PTX text is padded with NULs to the entry's size.
  const char *text = reinterpret_cast<const char *>(payload->data());
  auto items = scan_top_level(std::string_view(text, strnlen(text, payload->size())));
  if (!items)
    return make_error("fatbin: the compute_" + std::to_string(entry.sm_arch) + " PTX at offset " +
                      std::to_string(entry.header_offset) + ": " + items.error());
  std::vector<std::string> out;
  for (const auto &item : *items)
    if (item.is_entry)
      out.push_back(item.name);
  return out;
}

// ENTRIES' kernel names, index by index, decompressed and scanned on several threads: a large
// library's fatbin (cuBLAS, libtorch_cuda) is thousands of entries and gigabytes unpacked.
std::vector<Result<std::vector<std::string>>>
kernels_of_entries(const std::vector<FatbinEntry> &entries) {
  std::vector<Result<std::vector<std::string>>> out(
      entries.size(), Result<std::vector<std::string>>(std::vector<std::string>{}));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < entries.size();)
      if (entries[i].is_elf() || entries[i].is_ptx())
        out[i] = entry_kernels(entries[i]);
  };
  size_t threads =
      std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, entries.size()});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (auto &t : pool)
    t.join();
  return out;
}

} // namespace

Result<std::vector<FatbinKernel>> fatbin_kernels(std::span<const uint8_t> bytes) {
  auto entries = read_fatbin(bytes);
  if (!entries)
    return make_error(entries.error());
  auto names = kernels_of_entries(*entries);
  std::vector<FatbinKernel> out;
  std::unordered_map<std::string, size_t> index;
  for (size_t e = 0; e < entries->size(); ++e) {
    const FatbinEntry &entry = (*entries)[e];
    if (!names[e])
      return make_error(names[e].error());
    for (auto &name : *names[e]) {
      auto [it, added] = index.try_emplace(name, out.size());
      if (added)
        out.push_back({std::move(name), {}, {}});
      auto &archs = entry.is_ptx() ? out[it->second].ptx_archs : out[it->second].sass_archs;
      if (std::find(archs.begin(), archs.end(), entry.sm_arch) == archs.end())
        archs.push_back(entry.sm_arch);
    }
  }
  return out;
}

bool sass_runs_on(uint32_t cubin_sm, uint32_t gpu_sm) {
  return cubin_sm / 10 == gpu_sm / 10 && cubin_sm % 10 <= gpu_sm % 10;
}

KernelBackend kernel_backend(const FatbinKernel &kernel, uint32_t sm) {
  for (uint32_t a : kernel.ptx_archs)
    if (a <= sm)
      return KernelBackend::Ptx;
  for (uint32_t a : kernel.sass_archs)
    if (sass_runs_on(a, sm))
      return KernelBackend::Sass;
  return KernelBackend::None;
}

const char *backend_name(KernelBackend backend) {
  switch (backend) {
  case KernelBackend::Ptx:
    return "ptx";
  case KernelBackend::Sass:
    return "sass";
  case KernelBackend::None:
    break;
  }
  return "none";
}

} // namespace gpubt::runtime::ptx
