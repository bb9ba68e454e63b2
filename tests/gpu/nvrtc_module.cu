// A driver-API module from PTX that NVRTC compiles at run time (as nvrtc, Triton and CuPy users
// do): loaded with cuModuleLoadData (or cuModuleLoadDataEx with JIT options: MODE "ex"), then
// saxpy launched LAUNCHES times with cuLaunchKernel. Usage: nvrtc_module [N=50000] [LAUNCHES=3] [data|ex]
#include <cstdlib>
#include <cstring>
#include <nvrtc.h>
#include <string>
#include <vector>

#include "check.cuh"

static const char *kSource = R"(
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)";

#define NVRTC(x)                                                                                   \
  do {                                                                                             \
    nvrtcResult r = (x);                                                                           \
    if (r != NVRTC_SUCCESS) {                                                                      \
      std::fprintf(stderr, "%s: %s\n", #x, nvrtcGetErrorString(r));                               \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

// PTX for the newest virtual architecture NVRTC knows that the device can run.
static int compile_ptx(int cc, std::string &ptx) {
  int count = 0;
  NVRTC(nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(count);
  NVRTC(nvrtcGetSupportedArchs(archs.data()));
  int arch = 0;
  for (int a : archs)
    if (a <= cc && a > arch)
      arch = a;
  if (!arch) {
    std::fprintf(stderr, "nvrtc supports no architecture <= %d\n", cc);
    return 1;
  }
  nvrtcProgram prog;
  NVRTC(nvrtcCreateProgram(&prog, kSource, "saxpy.cu", 0, nullptr, nullptr));
  std::string opt = "--gpu-architecture=compute_" + std::to_string(arch);
  const char *opts[] = {opt.c_str()};
  if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fprintf(stderr, "nvrtc: %s\n", log.c_str());
    return 1;
  }
  size_t n = 0;
  NVRTC(nvrtcGetPTXSize(prog, &n));
  ptx.assign(n, '\0');
  NVRTC(nvrtcGetPTX(prog, ptx.data()));
  NVRTC(nvrtcDestroyProgram(&prog));
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  int launches = argc > 2 ? std::atoi(argv[2]) : 3;
  bool ex = argc > 3 && std::strcmp(argv[3], "ex") == 0;
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  int major = 0, minor = 0;
  CHECK_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CHECK_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  std::string ptx;
  if (compile_ptx(major * 10 + minor, ptx))
    return 1;
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUmodule mod;
  if (ex) {
    char log[4096] = "";
    CUjit_option keys[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {(void *)(uintptr_t)4, log, (void *)(uintptr_t)sizeof log};
    CHECK_CU(cuModuleLoadDataEx(&mod, ptx.c_str(), 3, keys, values));
  } else {
    CHECK_CU(cuModuleLoadData(&mod, ptx.c_str()));
  }
  CUfunction fn;
  CHECK_CU(cuModuleGetFunction(&fn, mod, "saxpy"));

  size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) { // small dyadic values: every result is exact in float
    hx[i] = float(i % 1000) * 0.5f;
    hy[i] = float(i % 77) * 0.25f;
  }
  CUdeviceptr x, y;
  CHECK_CU(cuMemAlloc(&x, bytes));
  CHECK_CU(cuMemAlloc(&y, bytes));
  CHECK_CU(cuMemcpyHtoD(x, hx.data(), bytes));
  CHECK_CU(cuMemcpyHtoD(y, hy.data(), bytes));
  float a = 2.0f;
  void *args[] = {&a, &x, &y, &n};
  int threads = 256, blocks = (n + threads - 1) / threads;
  for (int l = 0; l < launches; ++l)
    CHECK_CU(cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(cuMemcpyDtoH(hy.data(), y, bytes));
  uint64_t sum = fnv1a(hy.data(), bytes); // over y's bytes
  std::printf("threads %d launches %d checksum %016llx\n", blocks * threads, launches,
              (unsigned long long)sum);
  CHECK_CU(cuMemFree(x));
  CHECK_CU(cuMemFree(y));
  CHECK_CU(cuModuleUnload(mod));
  CHECK_CU(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
