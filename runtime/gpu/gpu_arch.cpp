// nvidia-smi prints one compute capability per GPU ("9.0"); its absence or failure is silent.
#include "runtime/gpu/gpu_arch.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gpubt::runtime {

GpuArchs machine_gpu_archs() {
  GpuArchs out;
  auto add = [&](std::string a) {
    if (!a.empty() && std::find(out.archs.begin(), out.archs.end(), a) == out.archs.end())
      out.archs.push_back(std::move(a));
  };
  if (const char *env = std::getenv("GPUBT_GPU_ARCH")) {
    std::stringstream s(env);
    for (std::string a; std::getline(s, a, ',');)
      add(a);
    out.source = "GPUBT_GPU_ARCH";
    return out;
  }
  FILE *p = popen("nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null", "r");
  if (!p)
    return out;
  std::string text;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p))
    text.append(buf, n);
  if (pclose(p) != 0)
    return out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) {
    std::string digits;
    for (char c : line)
      if (std::isdigit(static_cast<unsigned char>(c)))
        digits += c;
    if (!digits.empty())
      add("sm_" + digits);
  }
  if (!out.archs.empty())
    out.source = "nvidia-smi";
  return out;
}

std::optional<uint32_t> parse_sm_arch(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0)
    return std::nullopt;
  std::string digits = arch.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f'))
    digits.pop_back();
  if (digits.size() < 2 || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); }))
    return std::nullopt;
  return uint32_t(std::stoul(digits));
}

} // namespace gpubt::runtime
