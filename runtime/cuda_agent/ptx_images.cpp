// Image kinds: a fatbin (wrapper or container: its best PTX entry for the GPU), PTX text, or
// anything else (a cubin: no PTX, the SASS backend's).
#include "runtime/cuda_agent/ptx_images.h"

#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <sstream>

#include "runtime/abi/device_abi.h"
#include "runtime/ptx/fatbin.h"
#include "runtime/ptx/kernel_match.h"
#include "runtime/ptx/ptx_instrument.h"
#include "runtime/ptx/ptx_scan.h"

namespace gpubt::agent {

using runtime::ptx::kernel_matches;
using runtime::ptx::kernel_names;
using runtime::ptx::KernelNames;

namespace {

constexpr size_t kMaxPtxText = size_t(1) << 30;

uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool is_fatbin(const void *image) {
  uint32_t magic;
  std::memcpy(&magic, image, 4);
  return magic == runtime::kFatbinWrapperMagic || magic == runtime::kFatbinContainerMagic;
}

// PTX text as cuModuleLoadData takes it: NUL-terminated, with a .version directive.
bool is_ptx_text(const void *image) {
  const char *p = static_cast<const char *>(image);
  if (std::memcmp(p, ELFMAG, SELFMAG) == 0)
    return false;
  size_t n = strnlen(p, kMaxPtxText);
  return n < kMaxPtxText && std::string_view(p, n).find(".version") != std::string_view::npos;
}

// The PTX of the fatbin's highest PTX entry not above SM; empty when it has none.
Result<std::string> fatbin_ptx(const void *image, int sm) {
  auto container = runtime::fatbin_container_at(image);
  if (!container)
    return Error{container.error()};
  auto entries = runtime::read_fatbin(*container);
  if (!entries)
    return Error{entries.error()};
  const runtime::FatbinEntry *best = nullptr;
  for (const auto &e : *entries)
    if (e.is_ptx() && int(e.sm_arch) <= sm && (!best || e.sm_arch > best->sm_arch))
      best = &e;
  if (!best)
    return std::string();
  auto payload = runtime::entry_payload(*best);
  if (!payload)
    return Error{payload.error()};
  std::string text(payload->begin(), payload->end());
  text.resize(strnlen(text.c_str(), text.size())); // the NUL padding
  return text;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Where a probe at KIND goes in the kernel's PTX; null for a point this inserter has none of.
std::string *probe_slot(runtime::PtxKernelProbes &k, abi::ProbePointKind kind) {
  switch (kind) {
  case abi::ProbePointKind::Entry:
    return &k.entry_probe;
  case abi::ProbePointKind::Exit:
    return &k.exit_probe;
  case abi::ProbePointKind::MemoryAccess:
    return &k.memory_probe;
  case abi::ProbePointKind::Barrier:
    return &k.barrier_probe;
  default:
    return nullptr;
  }
}

// The accesses two memory probes sharing the dispatcher want between them (each still filters
// its own): no kind bit or no space bit in either is every one.
uint32_t either_access(uint32_t a, uint32_t b) {
  auto part = [&](uint32_t bits) { return (a & bits) && (b & bits) ? (a | b) & bits : 0u; };
  return part(abi::AccessKinds) | part(abi::AccessSpaces);
}

} // namespace

const std::string *PtxImages::probe_ptx(int sm) {
  if (auto it = probe_ptx_.find(sm); it != probe_ptx_.end())
    return it->second.empty() ? nullptr : &it->second;
  std::string want = "sm_" + std::to_string(sm), path;
  for (const auto &c : config_.cubins)
    if (!c.ptx.empty() && (c.arch == want || path.empty()))
      path = c.ptx;
  std::ifstream in(path);
  std::stringstream text;
  if (!path.empty())
    text << in.rdbuf();
  return (probe_ptx_[sm] = in ? text.str() : std::string()).empty() ? nullptr : &probe_ptx_[sm];
}

Substitution PtxImages::substitute(const void *image, int sm, int max_isa) {
  if (!image)
    return {};
  std::string source;
  if (is_fatbin(image)) {
    auto ptx = fatbin_ptx(image, sm);
    if (!ptx)
      return {nullptr, "its fatbin is unreadable (" + ptx.error() + ")"};
    if (ptx->empty())
      return {nullptr, "it has no PTX for sm_" + std::to_string(sm)};
    source = std::move(*ptx);
  } else if (is_ptx_text(image)) {
    source = static_cast<const char *>(image);
  } else {
    return {nullptr, "it is a cubin (no PTX)"};
  }
  std::string symbol =
      kUserdataPrefix + hex(fnv1a(source, fnv1a(std::to_string(sm) + "/" + std::to_string(max_isa))));
  if (auto it = images_.find(symbol); it != images_.end())
    return {it->second.get(), ""};

  auto items = runtime::ptx::scan_top_level(source);
  if (!items)
    return {nullptr, "its PTX does not parse (" + items.error() + ")"};
  runtime::PtxInstrumentOptions options;
  options.userdata_symbol = symbol;
  options.max_ptx_isa = max_isa;
  options.max_sm = sm;
  auto image_out = std::make_unique<PtxImage>();
  image_out->symbol = symbol;
  for (const auto &item : *items) {
    if (!item.is_entry || !item.body_open)
      continue;
    KernelNames names = kernel_names(item.name);
    runtime::PtxKernelProbes k;
    k.kernel = item.name;
    // One matching probe at a point runs without its probe_mask test; several share the
    // dispatcher, which calls each one's tested form.
    int matches[abi::kProbePointKinds] = {};
    bool any = false;
    for (size_t i = 0; i < config_.device.probes.size() && i < 64; ++i) {
      const auto &p = config_.device.probes[i];
      std::string *slot = probe_slot(k, p.point.kind);
      if (!slot || !kernel_matches(p.kernel, names))
        continue;
      int n = ++matches[static_cast<int>(p.point.kind)];
      *slot = n == 1 ? GPUBT_PROBE_FUNCTION_PREFIX + std::to_string(i) + GPUBT_PROBE_DIRECT_SUFFIX
                     : p.patch;
      if (p.point.kind == abi::ProbePointKind::MemoryAccess)
        k.memory_access = n == 1 ? p.point.access : either_access(k.memory_access, p.point.access);
      any = true;
    }
    if (any) {
      options.kernels.push_back(k);
      image_out->kernels.push_back(item.name);
    }
  }
  if (options.kernels.empty())
    return {};
  const std::string *probes = probe_ptx(sm);
  if (!probes)
    return {nullptr, "there is no probe PTX for sm_" + std::to_string(sm)};
  options.probe_ptx = *probes;
  auto out = runtime::instrument_ptx(source, options);
  if (!out)
    return {nullptr, "instrumenting its PTX failed: " + out.error()};
  image_out->ptx = std::move(*out);
  const PtxImage *result = image_out.get();
  images_[symbol] = std::move(image_out);
  return {result, ""};
}

const PtxImage *PtxImages::by_symbol(const std::string &symbol) const {
  auto it = images_.find(symbol);
  return it == images_.end() ? nullptr : it->second.get();
}

} // namespace gpubt::agent
