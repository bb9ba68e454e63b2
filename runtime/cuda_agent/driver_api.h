// CUDA driver functions for the agent. libcuda is loaded (it loaded the agent) but privately:
// functions are looked up by name in it, without loading it again.
#pragma once
#include <dlfcn.h>

namespace gpubt::agent {

template <class F> F driver_function(const char *name) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<F>(dlsym(cuda ? cuda : RTLD_DEFAULT, name));
}

// A driver function by its name in cuda.h, looked up once: GPUBT_DRIVER(cuCtxSetCurrent)(ctx).
// cuda.h maps names to their current version (cuMemcpyHtoDAsync -> cuMemcpyHtoDAsync_v2): the
// symbol looked up is the expanded name, never the old ABI's.
#define GPUBT_DRIVER_NAME_(fn) #fn
#define GPUBT_DRIVER_NAME(fn) GPUBT_DRIVER_NAME_(fn)
#define GPUBT_DRIVER(fn)                                                                           \
  ([] {                                                                                            \
    static auto f = ::gpubt::agent::driver_function<decltype(&fn)>(GPUBT_DRIVER_NAME(fn));         \
    return f;                                                                                      \
  }())

} // namespace gpubt::agent
