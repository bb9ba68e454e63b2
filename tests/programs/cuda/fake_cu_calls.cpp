// Driver API launches against fake_libcuda (linked with a RUNPATH to it): a CUfunction from
// cuModuleGetFunction launched 3 times, a CUkernel from cuLibraryGetKernel (cast to CUfunction,
// as CUDA allows) once, its CUfunction from cuKernelGetFunction (as cuBLAS launches) 5 times, and
// an unmangled (Triton-style) kernel name twice; with an argument, a kernel of that name once.
extern "C" {
typedef int CUresult;
typedef void *CUfunction, *CUmodule, *CUkernel, *CUlibrary, *CUstream;
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuLibraryGetKernel(CUkernel *, CUlibrary, const char *);
CUresult cuKernelGetFunction(CUfunction *, CUkernel);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
}

int main(int argc, char **argv) {
  CUfunction f = nullptr, t = nullptr, kf = nullptr;
  CUkernel k = nullptr;
  cuModuleGetFunction(&f, nullptr, "_Z5scalePfi");
  cuLibraryGetKernel(&k, nullptr, "_Z3addPiS_");
  cuModuleGetFunction(&t, nullptr, "triton_poi_fused_add_0");
  cuKernelGetFunction(&kf, k);
  for (int i = 0; i < 5; ++i)
    cuLaunchKernel(kf, 2, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr);
  for (int i = 0; i < 3; ++i)
    cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, nullptr);
  cuLaunchKernel(static_cast<CUfunction>(k), 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, nullptr);
  for (int i = 0; i < 2; ++i)
    cuLaunchKernel(t, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr);
  if (argc > 1) {
    CUfunction named = nullptr;
    cuModuleGetFunction(&named, nullptr, argv[1]);
    cuLaunchKernel(named, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  }
  return 0;
}
