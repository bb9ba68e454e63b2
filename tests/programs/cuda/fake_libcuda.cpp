// A stand-in libcuda.so.1 for CI (no driver): the kernel lookups and cuLaunchKernel succeed and
// hand out heap handles, as a real driver does, so kname() of CUfunction/CUkernel handles
// (learned from cuModuleGetFunction/cuLibraryGetKernel/cuKernelGetFunction) is tested without a
// GPU.
#include <cstdlib>

extern "C" {
typedef int CUresult;
typedef void *CUfunction, *CUmodule, *CUkernel, *CUlibrary, *CUstream;

// Like a real driver, the lookups read the name (kname()'s return probe reads it after the call;
// a page nobody has touched yet would read as "").
__attribute__((noinline)) CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule,
                                                       const char *name) {
  if (!name || !*name)
    return 500; // CUDA_ERROR_NOT_FOUND
  *hfunc = malloc(16);
  return 0;
}
__attribute__((noinline)) CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary,
                                                      const char *name) {
  if (!name || !*name)
    return 500;
  *pKernel = malloc(16);
  return 0;
}
__attribute__((noinline)) CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) {
  if (!kernel)
    return 400; // CUDA_ERROR_INVALID_HANDLE
  *pFunc = malloc(16); // a context's own handle, not the kernel's
  return 0;
}
__attribute__((noinline)) CUresult cuLaunchKernelEx(const void *, CUfunction, void **, void **) {
  return 0;
}
__attribute__((noinline)) CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned,
                                                  unsigned, unsigned, unsigned, unsigned, CUstream,
                                                  void **, void **) {
  return 0;
}
}
