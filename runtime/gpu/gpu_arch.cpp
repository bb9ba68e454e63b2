// The CUDA driver, loaded with dlopen (gpubt links no CUDA), or nvidia-smi, which prints one
// compute capability per GPU ("9.0"); their absence or failure is silent.
#include "runtime/gpu/gpu_arch.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <sstream>

namespace gpubt::runtime {
namespace {

// "sm_XY" for each GPU the driver sees. The driver is initialized without
// CUDA_INJECTION64_PATH: a shell set up for dormant agents (`gpubt agent env`) must not load
// one into gpubt itself.
std::vector<std::string> driver_archs() {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda)
    return {};
  using Init = int (*)(unsigned);
  using Count = int (*)(int *);
  using Get = int (*)(int *, int, int);
  auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(cuda, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(dlsym(cuda, "cuDeviceGetAttribute"));
  const char *injection = std::getenv("CUDA_INJECTION64_PATH");
  std::string saved = injection ? injection : "";
  unsetenv("CUDA_INJECTION64_PATH");
  std::vector<std::string> archs;
  int n = 0;
  constexpr int kMajor = 75, kMinor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR
  if (init && count && get && init(0) == 0 && count(&n) == 0)
    for (int dev = 0; dev < n; ++dev) {
      int major = 0, minor = 0;
      if (get(&major, kMajor, dev) == 0 && get(&minor, kMinor, dev) == 0)
        archs.push_back("sm_" + std::to_string(major * 10 + minor));
    }
  if (injection)
    setenv("CUDA_INJECTION64_PATH", saved.c_str(), 1);
  return archs; // the driver stays loaded: unloading an initialized driver is not supported
}

} // namespace

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
  for (auto &arch : driver_archs())
    add(std::move(arch));
  if (!out.archs.empty()) {
    out.source = "the CUDA driver";
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
